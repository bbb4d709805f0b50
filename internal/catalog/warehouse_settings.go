package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twinlake/twinlake/internal/objects"
)

// A warehouse's catalog settings live in the warehouse bucket itself, in
// one small JSON object under the reserved prefix, so that they replicate
// with the bucket and a promoted DR site has them without copying anything.

// SettingsKey is the object key of a warehouse's catalog settings.
const SettingsKey = ReservedPrefix + "settings.json"

// Setting names accepted by SetWarehouseSettings.
const (
	// SettingSoftDelete is the soft-delete retention: "off" (dropping a
	// table or view forgets it and, with purge, deletes its files at once)
	// or a duration such as "7d", "12h", "30m", "1s" (a dropped table or
	// view keeps its files and can be undropped until the retention ends).
	SettingSoftDelete = "soft_delete"
)

// Bounds of the soft-delete retention.
const (
	MinSoftDelete = time.Second
	MaxSoftDelete = 3650 * 24 * time.Hour
)

// WarehouseSettings are a warehouse's catalog settings.
type WarehouseSettings struct {
	// SoftDelete is the soft-delete retention; zero means off.
	SoftDelete time.Duration
	// Maintenance is the warehouse's table maintenance policy
	// (maintenance_settings.go).
	Maintenance MaintenanceSettings
}

type settingsWire struct {
	SoftDeleteMS int64 `json:"soft_delete_ms,omitempty"`
	maintenanceWire
}

// ParseRetention parses a soft-delete retention: "off" or an integer with a
// unit s, m, h or d, within MinSoftDelete..MaxSoftDelete.
func ParseRetention(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "off" || s == "" {
		return 0, nil
	}
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}
	unit, ok := units[s[len(s)-1]]
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if !ok || err != nil || n <= 0 || n > int64(MaxSoftDelete/unit) {
		return 0, fmt.Errorf("%w: soft_delete=%q: want off or a duration from 1s to 3650d (s, m, h or d)", ErrInvalidRequest, s)
	}
	d := time.Duration(n) * unit
	if d < MinSoftDelete || d > MaxSoftDelete {
		return 0, fmt.Errorf("%w: soft_delete=%q is outside 1s..3650d", ErrInvalidRequest, s)
	}
	return d, nil
}

// FormatRetention renders a retention as ParseRetention reads it.
func FormatRetention(d time.Duration) string {
	switch {
	case d <= 0:
		return "off"
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

// WarehouseSettings returns the warehouse's catalog settings (all off when
// none were set).
func (c *Catalog) WarehouseSettings(ctx context.Context, wh string) (WarehouseSettings, error) {
	data, err := c.readObject(ctx, wh, SettingsKey)
	if errors.Is(err, objects.ErrObjectNotFound) {
		return WarehouseSettings{}, nil
	}
	if err != nil {
		return WarehouseSettings{}, fmt.Errorf("catalog: settings of %s: %w", wh, err)
	}
	var w settingsWire
	if err := json.Unmarshal(data, &w); err != nil {
		return WarehouseSettings{}, fmt.Errorf("catalog: settings of %s: %w", wh, err)
	}
	return WarehouseSettings{SoftDelete: time.Duration(w.SoftDeleteMS) * time.Millisecond,
		Maintenance: w.maintenanceWire.settings()}, nil
}

// SetWarehouseSettings applies name=value settings (see the Setting
// constants) to a warehouse, checking them all before it changes anything,
// and returns the warehouse after the change.
func (c *Catalog) SetWarehouseSettings(ctx context.Context, wh string, settings map[string]string) (Warehouse, error) {
	if _, err := c.Warehouse(ctx, wh); err != nil {
		return Warehouse{}, err
	}
	cur, err := c.WarehouseSettings(ctx, wh)
	if err != nil {
		return Warehouse{}, err
	}
	var errs []error
	for k, v := range settings {
		switch k {
		case SettingSoftDelete:
			d, err := ParseRetention(v)
			if err != nil {
				errs = append(errs, err)
			}
			cur.SoftDelete = d
		default:
			known, err := cur.Maintenance.set(k, v)
			if !known {
				err = fmt.Errorf("%w: unknown setting %q (known: %s, %s)", ErrInvalidRequest, k, SettingSoftDelete,
					strings.Join(MaintenanceSettingNames(), ", "))
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Warehouse{}, err
	}
	body, err := json.Marshal(settingsWire{SoftDeleteMS: cur.SoftDelete.Milliseconds(), maintenanceWire: cur.Maintenance.wire()})
	if err != nil {
		return Warehouse{}, err
	}
	if _, err := c.obj.PutObject(ctx, wh, SettingsKey, bytes.NewReader(body), objects.PutOptions{
		Size: int64(len(body)), ContentType: "application/json",
	}); err != nil {
		return Warehouse{}, fmt.Errorf("catalog: write settings of %s: %w", wh, err)
	}
	c.log.Info("warehouse settings changed", "warehouse", wh, "soft_delete", FormatRetention(cur.SoftDelete),
		"maintenance", cur.Maintenance.String())
	return c.Warehouse(ctx, wh)
}
