package cmdutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Alias names one twinlake site for the client: its URL and credentials.
type Alias struct {
	URL       string `json:"url"`
	AccessKey string `json:"accessKey"`
	SecretKey string `json:"secretKey"`
	// SessionToken goes with a temporary credential (STS AssumeRole); it
	// is sent with every request of every surface.
	SessionToken string `json:"sessionToken,omitempty"`
}

// clientConfig is the on-disk client configuration (config.json, mode 0600).
type ClientConfig struct {
	Version string           `json:"version"`
	Aliases map[string]Alias `json:"aliases"`
}

// errNoAlias is returned when a command names an alias that is not configured.
var ErrNoAlias = errors.New("no such alias")

func (o *Options) ConfigPath() (string, error) {
	dir := o.ConfigDir
	if dir == "" {
		dir = os.Getenv("TWINLAKE_CONFIG_DIR")
	}
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("locate home directory: %w", err)
		}
		dir = filepath.Join(home, ".twinlake")
	}
	return filepath.Join(dir, "config.json"), nil
}

func (o *Options) LoadConfig() (*ClientConfig, error) {
	p, err := o.ConfigPath()
	if err != nil {
		return nil, err
	}
	cfg := &ClientConfig{Version: "1", Aliases: map[string]Alias{}}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, cfg); err != nil {
		return nil, fmt.Errorf("parse %s: %w", p, err)
	}
	if cfg.Aliases == nil {
		cfg.Aliases = map[string]Alias{}
	}
	return cfg, nil
}

// saveConfig writes the config atomically with mode 0600.
func (o *Options) SaveConfig(cfg *ClientConfig) error {
	p, err := o.ConfigPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// alias resolves a configured alias by name.
func (o *Options) LookupAlias(name string) (Alias, error) {
	cfg, err := o.LoadConfig()
	if err != nil {
		return Alias{}, err
	}
	a, ok := cfg.Aliases[name]
	if !ok {
		return Alias{}, fmt.Errorf("%w %q (add it with 'twinlake alias set %s URL ACCESS_KEY SECRET_KEY')", ErrNoAlias, name, name)
	}
	return a, nil
}

// target is ALIAS[/BUCKET[/KEY]] split into its parts.
type Target struct {
	Alias  string
	Bucket string
	Key    string
}

func ParseTarget(s string) Target {
	parts := strings.SplitN(s, "/", 3)
	t := Target{Alias: parts[0]}
	if len(parts) > 1 {
		t.Bucket = parts[1]
	}
	if len(parts) > 2 {
		t.Key = parts[2]
	}
	return t
}

func ValidateAliasURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("invalid URL %q: want http(s)://host:port", raw)
	}
	return nil
}

func SortedAliasNames(cfg *ClientConfig) []string {
	names := make([]string, 0, len(cfg.Aliases))
	for n := range cfg.Aliases {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
