package catalog

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Table maintenance policy. A warehouse's settings (settings.json, next to
// soft_delete, so they replicate with the bucket) give the defaults of its
// tables; a table's own properties override them:
//
//	warehouse setting       table property                                default
//	maintenance             twinlake.maintenance.enabled                  off
//	expire_older_than       history.expire.max-snapshot-age-ms            5d
//	retain_last             history.expire.min-snapshots-to-keep          1
//	orphans_older_than      twinlake.maintenance.orphans-older-than-ms    3d ("off": no orphan removal)
//
// The history.expire.* properties are Iceberg's own, so engines that
// expire snapshots themselves read the same numbers; a branch's or tag's
// min-snapshots-to-keep and max-snapshot-age-ms win over both, as in
// Iceberg. gc.enabled=false turns maintenance off for the table.

// Warehouse setting names of the maintenance policy.
const (
	SettingMaintenance      = "maintenance"
	SettingExpireOlderThan  = "expire_older_than"
	SettingRetainLast       = "retain_last"
	SettingOrphansOlderThan = "orphans_older_than"
)

// Table properties of the maintenance policy (besides Iceberg's
// history.expire.* and gc.enabled).
const (
	PropMaintenanceEnabled = "twinlake.maintenance.enabled"
	PropOrphansOlderThanMS = "twinlake.maintenance.orphans-older-than-ms"
)

// Bounds and defaults of the maintenance policy.
const (
	MinMaintenanceAge       = time.Second
	MaxMaintenanceAge       = 3650 * 24 * time.Hour
	MaxRetainLast           = 100000
	DefaultExpireOlderThan  = 5 * 24 * time.Hour
	DefaultRetainLast       = 1
	DefaultOrphansOlderThan = 3 * 24 * time.Hour
)

// MaintenanceSettings is a warehouse's maintenance policy. Zero durations
// and counts mean the defaults; OrphansOff turns orphan removal off.
type MaintenanceSettings struct {
	Enabled          bool
	ExpireOlderThan  time.Duration
	RetainLast       int
	OrphansOlderThan time.Duration
	OrphansOff       bool
}

type maintenanceWire struct {
	Maintenance        bool  `json:"maintenance,omitempty"`
	ExpireOlderThanMS  int64 `json:"expire_older_than_ms,omitempty"`
	RetainLast         int   `json:"retain_last,omitempty"`
	OrphansOlderThanMS int64 `json:"orphans_older_than_ms,omitempty"`
	OrphansOff         bool  `json:"orphans_off,omitempty"`
}

func (w maintenanceWire) settings() MaintenanceSettings {
	return MaintenanceSettings{Enabled: w.Maintenance, ExpireOlderThan: time.Duration(w.ExpireOlderThanMS) * time.Millisecond,
		RetainLast: w.RetainLast, OrphansOlderThan: time.Duration(w.OrphansOlderThanMS) * time.Millisecond, OrphansOff: w.OrphansOff}
}

func (m MaintenanceSettings) wire() maintenanceWire {
	return maintenanceWire{Maintenance: m.Enabled, ExpireOlderThanMS: m.ExpireOlderThan.Milliseconds(), RetainLast: m.RetainLast,
		OrphansOlderThanMS: m.OrphansOlderThan.Milliseconds(), OrphansOff: m.OrphansOff}
}

// MaintenanceSettingNames lists the warehouse settings of the policy.
func MaintenanceSettingNames() []string {
	return []string{SettingMaintenance, SettingExpireOlderThan, SettingRetainLast, SettingOrphansOlderThan}
}

// String renders the policy as the settings read it.
func (m MaintenanceSettings) String() string {
	on := "off"
	if m.Enabled {
		on = "on"
	}
	orphans := FormatRetention(m.orphanAge())
	if m.OrphansOff {
		orphans = "off"
	}
	return fmt.Sprintf("%s=%s %s=%s %s=%d %s=%s", SettingMaintenance, on, SettingExpireOlderThan, FormatRetention(m.expireAge()),
		SettingRetainLast, m.retain(), SettingOrphansOlderThan, orphans)
}

func (m MaintenanceSettings) expireAge() time.Duration {
	return nonZero(m.ExpireOlderThan, DefaultExpireOlderThan)
}

func (m MaintenanceSettings) orphanAge() time.Duration {
	return nonZero(m.OrphansOlderThan, DefaultOrphansOlderThan)
}

func (m MaintenanceSettings) retain() int {
	if m.RetainLast > 0 {
		return m.RetainLast
	}
	return DefaultRetainLast
}

func nonZero(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// set applies one name=value; known is false for a name that is not a
// maintenance setting.
func (m *MaintenanceSettings) set(name, value string) (known bool, err error) {
	value = strings.TrimSpace(value)
	switch name {
	case SettingMaintenance:
		switch strings.ToLower(value) {
		case "on":
			m.Enabled = true
		case "off":
			m.Enabled = false
		default:
			return true, fmt.Errorf("%w: %s=%q: want on or off", ErrInvalidRequest, name, value)
		}
	case SettingExpireOlderThan:
		d, err := ParseAge(name, value)
		if err != nil {
			return true, err
		}
		m.ExpireOlderThan = d
	case SettingRetainLast:
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > MaxRetainLast {
			return true, fmt.Errorf("%w: %s=%q: want an integer from 1 to %d", ErrInvalidRequest, name, value, MaxRetainLast)
		}
		m.RetainLast = n
	case SettingOrphansOlderThan:
		if strings.EqualFold(value, "off") {
			m.OrphansOff, m.OrphansOlderThan = true, 0
			return true, nil
		}
		d, err := ParseAge(name, value)
		if err != nil {
			return true, err
		}
		m.OrphansOff, m.OrphansOlderThan = false, d
	default:
		return false, nil
	}
	return true, nil
}

// ParseAge parses a maintenance age (name=value, for the error): an
// integer with a unit s, m, h or d, within MinMaintenanceAge..MaxMaintenanceAge.
func ParseAge(name, s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("%w: %s=%q: want a duration from 1s to 3650d (s, m, h or d)", ErrInvalidRequest, name, s)
	if len(s) < 2 {
		return 0, bad
	}
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}
	unit, ok := units[s[len(s)-1]]
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if !ok || err != nil || n <= 0 || n > int64(MaxMaintenanceAge/unit) {
		return 0, bad
	}
	d := time.Duration(n) * unit
	if d < MinMaintenanceAge || d > MaxMaintenanceAge {
		return 0, bad
	}
	return d, nil
}

// tablePolicy is the maintenance one table gets: its warehouse's policy
// with the table's properties over it.
type tablePolicy struct {
	enabled    bool
	gcDisabled bool
	expireAge  time.Duration
	retainLast int
	orphans    bool
	orphanAge  time.Duration
}

// resolvePolicy folds a table's properties over its warehouse's policy.
// Out-of-range property values are ignored (the warehouse's value holds),
// so that a typo in a property cannot turn a window into zero.
func resolvePolicy(ws MaintenanceSettings, props iceberg.Properties) tablePolicy {
	p := tablePolicy{enabled: ws.Enabled, expireAge: ws.expireAge(), retainLast: ws.retain(),
		orphans: !ws.OrphansOff, orphanAge: ws.orphanAge()}
	if v, ok := props[PropMaintenanceEnabled]; ok {
		if b, err := strconv.ParseBool(v); err == nil {
			p.enabled = b
		}
	}
	p.gcDisabled = !props.GetBool(table.GCEnabledKey, true)
	if d, ok := propMS(props, table.MaxSnapshotAgeMsKey); ok {
		p.expireAge = d
	}
	if v, ok := props[table.MinSnapshotsToKeepKey]; ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 1 && n <= MaxRetainLast {
			p.retainLast = n
		}
	}
	if v, ok := props[PropOrphansOlderThanMS]; ok && strings.EqualFold(v, "off") {
		p.orphans = false
	} else if d, ok := propMS(props, PropOrphansOlderThanMS); ok {
		p.orphans, p.orphanAge = true, d
	}
	return p
}

// propMS reads a millisecond property within the maintenance age bounds.
func propMS(props iceberg.Properties, key string) (time.Duration, bool) {
	v, ok := props[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < MinMaintenanceAge.Milliseconds() || n > MaxMaintenanceAge.Milliseconds() {
		return 0, false
	}
	return time.Duration(n) * time.Millisecond, true
}
