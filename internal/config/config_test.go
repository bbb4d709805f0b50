package config

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/meta"
)

func noEnv(string) (string, bool) { return "", false }

func envOf(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func newStore(t *testing.T, db meta.Store, env map[string]string) *Store {
	t.Helper()
	s, err := New(db, Config{LookupEnv: envOf(env)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// render turns Get's answer into "key=value(source)" pairs for comparison.
func render(t *testing.T, s *Store, subsys string) string {
	t.Helper()
	kvs, err := s.Get(subsys)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, kv := range kvs {
		if kv.Help == "" {
			t.Errorf("%s has no help", kv.Key)
		}
		b.WriteString(kv.Key + "=" + kv.Value + "(" + string(kv.Source) + ") ")
	}
	return strings.TrimSpace(b.String())
}

func TestDefaults(t *testing.T) {
	s := newStore(t, meta.NewMem(), nil)
	for _, tc := range []struct{ subsys, want string }{
		{SubsysTables, "replica_catalog=off(default) replica_catalog_consistency=strict(default) " +
			"replica_catalog_scan_interval=10s(default) replica_catalog_retry_interval=5m(default) " +
			"replica_catalog_txn_stale_timeout=15m(default) maintenance_interval=6h(default)"},
		{SubsysReplication, "max_retries=10(default) retry_base_delay=1s(default) retry_max_delay=5m(default) workers=16(default) mismatch_interval=5m(default) resync_backlog=20000(default)"},
		{SubsysAPI, "requests_max=0(default) requests_deadline=10s(default) read_header_timeout=30s(default) body_idle_timeout=1m(default) body_deadline=24h(default) ssec_allow_http=off(default)"},
		{SubsysILM, "interval=1m(default) day_length=24h(default)"},
	} {
		if got := render(t, s, tc.subsys); got != tc.want {
			t.Errorf("Get(%s)\n got %s\nwant %s", tc.subsys, got, tc.want)
		}
	}
	if got := s.Subsystems(); strings.Join(got, ",") != "api,ilm,replication,tables" {
		t.Errorf("Subsystems = %v", got)
	}
	if s.Bool(SubsysTables, TablesReplicaCatalog) || s.Duration(SubsysTables, TablesReplicaCatalogScanInterval) != 10*time.Second ||
		s.Int(SubsysReplication, ReplicationWorkers) != 16 || s.String(SubsysTables, TablesReplicaCatalogConsistency) != ConsistencyStrict {
		t.Error("typed accessors disagree with defaults")
	}
}

func TestKeyTableIsWellFormed(t *testing.T) {
	seen := map[keyID]bool{}
	for _, k := range Keys() {
		id := keyID{k.Subsys, k.Name}
		if seen[id] {
			t.Errorf("%s %s twice", k.Subsys, k.Name)
		}
		seen[id] = true
		if v, err := k.parse(k.Default); err != nil || v.text != k.Default {
			t.Errorf("%s %s: default %q is not canonical: %q %v", k.Subsys, k.Name, k.Default, v.text, err)
		}
		if k.Help == "" || !validKeyName(k.Name) {
			t.Errorf("%s %s: needs help and a plain name", k.Subsys, k.Name)
		}
	}
}

func TestSetAppliesPersistsAndNotifies(t *testing.T) {
	db := meta.NewMem()
	s := newStore(t, db, nil)
	var got []string
	cancel := s.Subscribe(func(subsys string) {
		// Subscribers see the new value already.
		got = append(got, subsys+":"+s.String(SubsysTables, TablesReplicaCatalog))
	})
	ctx := context.Background()
	if err := s.Set(ctx, SubsysTables, map[string]string{
		TablesReplicaCatalog:             "ON",
		TablesReplicaCatalogScanInterval: " 200ms",
	}); err != nil {
		t.Fatal(err)
	}
	if !s.Bool(SubsysTables, TablesReplicaCatalog) || s.Duration(SubsysTables, TablesReplicaCatalogScanInterval) != 200*time.Millisecond {
		t.Fatal("accessors not updated")
	}
	if strings.Join(got, ",") != "tables:on" {
		t.Fatalf("subscriber saw %v", got)
	}
	cancel()
	if err := s.Set(ctx, SubsysReplication, map[string]string{ReplicationWorkers: "+4"}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatal("cancelled subscriber still called")
	}

	// A second Store over the same metadata reads what was stored.
	s2 := newStore(t, db, nil)
	want := "replica_catalog=on(stored) replica_catalog_consistency=strict(default) " +
		"replica_catalog_scan_interval=200ms(stored) replica_catalog_retry_interval=5m(default) " +
		"replica_catalog_txn_stale_timeout=15m(default) maintenance_interval=6h(default)"
	if r := render(t, s2, SubsysTables); r != want {
		t.Fatalf("after reopen\n got %s\nwant %s", r, want)
	}
	if s2.Int(SubsysReplication, ReplicationWorkers) != 4 {
		t.Fatal("workers not persisted in canonical form")
	}

	// An empty value resets to the default and drops the stored record.
	if err := s2.Set(ctx, SubsysTables, map[string]string{TablesReplicaCatalog: "", TablesReplicaCatalogScanInterval: ""}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get([]byte(keyPrefix + SubsysTables)); !errors.Is(err, meta.ErrNotFound) {
		t.Fatalf("reset left a record: %v", err)
	}
	if s2.Bool(SubsysTables, TablesReplicaCatalog) {
		t.Fatal("reset did not restore the default")
	}
}

func TestSetReportsEveryProblem(t *testing.T) {
	for _, tc := range []struct {
		name   string
		subsys string
		kv     map[string]string
		is     []error
		msgs   []string
	}{
		{"unknown subsystem", "nope", map[string]string{"a": "b"}, []error{ErrUnknownSubsystem}, []string{`"nope"`}},
		{"all at once", SubsysTables, map[string]string{
			"bogus":                           "1",
			TablesReplicaCatalog:              "maybe",
			TablesReplicaCatalogConsistency:   "sloppy",
			TablesReplicaCatalogScanInterval:  "-1s",
			TablesReplicaCatalogRetryInterval: "1m",
		}, []error{ErrUnknownKey, ErrInvalidValue}, []string{
			`unknown key "bogus"`, `replica_catalog: invalid value "maybe" (want on or off)`,
			`sloppy`, `strict or eventual`, `replica_catalog_scan_interval`,
		}},
		{"int below min", SubsysReplication, map[string]string{ReplicationWorkers: "0", ReplicationMaxRetries: "x"},
			[]error{ErrInvalidValue}, []string{"from 1 to 256", "from 0 to 1000"}},
		{"out of range", SubsysReplication, map[string]string{ReplicationWorkers: "40000", ReplicationMaxRetries: "100000000",
			ReplicationRetryMaxDelay: "8760h", ReplicationMismatchInterval: "1ms"},
			[]error{ErrInvalidValue}, []string{`workers: invalid value "40000"`, `max_retries: invalid value "100000000"`,
				`retry_max_delay: invalid value "8760h"`, `mismatch_interval: invalid value "1ms"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := meta.NewMem()
			s := newStore(t, db, nil)
			err := s.Set(context.Background(), tc.subsys, tc.kv)
			for _, want := range tc.is {
				if !errors.Is(err, want) {
					t.Errorf("err %v is not %v", err, want)
				}
			}
			for _, m := range tc.msgs {
				if err == nil || !strings.Contains(err.Error(), m) {
					t.Errorf("err %v lacks %q", err, m)
				}
			}
			if s.Duration(SubsysTables, TablesReplicaCatalogRetryInterval) != 5*time.Minute {
				t.Error("the valid key of a failed Set was applied")
			}
			if n := countKeys(t, db); n != 0 {
				t.Errorf("failed Set stored %d records", n)
			}
		})
	}
}

func countKeys(t *testing.T, db meta.Store) int {
	n := 0
	if err := meta.Scan(db, nil, nil, func(k, v []byte) (bool, error) { n++; return true, nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestEnvOverrides(t *testing.T) {
	s := newStore(t, meta.NewMem(), map[string]string{
		"TWINLAKE_TABLES_REPLICA_CATALOG_SCAN_INTERVAL": "250ms",
		"TWINLAKE_REPLICATION_MAX_RETRIES":              "3",
		"TWINLAKE_TABLES_REPLICA_CATALOG":               "on", // has no override
		"TWINLAKE_REPLICATION_WORKERS":                  "",   // empty reads as unset
	})
	if err := s.Set(context.Background(), SubsysReplication, map[string]string{ReplicationMaxRetries: "7"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		subsys, key, value string
		source             Source
	}{
		{SubsysTables, TablesReplicaCatalogScanInterval, "250ms", SourceEnv},
		{SubsysTables, TablesReplicaCatalog, "off", SourceDefault},
		{SubsysReplication, ReplicationMaxRetries, "3", SourceEnv}, // the environment wins over Set
		{SubsysReplication, ReplicationWorkers, "16", SourceDefault},
	} {
		kvs, _ := s.Get(tc.subsys)
		for _, kv := range kvs {
			if kv.Key == tc.key && (kv.Value != tc.value || kv.Source != tc.source) {
				t.Errorf("%s %s = %s(%s), want %s(%s)", tc.subsys, tc.key, kv.Value, kv.Source, tc.value, tc.source)
			}
		}
	}
	if s.Duration(SubsysTables, TablesReplicaCatalogScanInterval) != 250*time.Millisecond {
		t.Error("accessor ignores the environment")
	}

	_, err := New(meta.NewMem(), Config{LookupEnv: envOf(map[string]string{
		"TWINLAKE_REPLICATION_WORKERS": "many",
		"TWINLAKE_API_REQUESTS_MAX":    "-1",
	})})
	if !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), "TWINLAKE_REPLICATION_WORKERS") ||
		!strings.Contains(err.Error(), "TWINLAKE_API_REQUESTS_MAX") {
		t.Fatalf("bad overrides: %v", err)
	}
}

func TestGuardRefuses(t *testing.T) {
	db := meta.NewMem()
	s := newStore(t, db, nil)
	errOtherReplica := errors.New("site b is already the replica")
	var seen map[string]string
	s.AddGuard(func(ctx context.Context, subsys string, proposed map[string]string) error {
		seen = proposed
		if subsys == SubsysTables && proposed[TablesReplicaCatalog] == "on" {
			return errOtherReplica
		}
		return nil
	})
	notified := false
	s.Subscribe(func(string) { notified = true })
	err := s.Set(context.Background(), SubsysTables, map[string]string{TablesReplicaCatalog: "On"})
	if !errors.Is(err, ErrRefused) || !errors.Is(err, errOtherReplica) {
		t.Fatalf("err = %v", err)
	}
	if seen[TablesReplicaCatalog] != "on" {
		t.Errorf("guard saw %v, want canonical values", seen)
	}
	if s.Bool(SubsysTables, TablesReplicaCatalog) || notified || countKeys(t, db) != 0 {
		t.Fatal("refused change took effect")
	}
	if err := s.Set(context.Background(), SubsysTables, map[string]string{TablesReplicaCatalogConsistency: "eventual"}); err != nil {
		t.Fatalf("guard refused an unrelated change: %v", err)
	}
}

func TestFailedCommitChangesNothing(t *testing.T) {
	db := meta.NewMem()
	s := newStore(t, db, nil)
	db.Close()
	err := s.Set(context.Background(), SubsysAPI, map[string]string{APIRequestsMax: "100"})
	if !errors.Is(err, meta.ErrClosed) {
		t.Fatalf("err = %v", err)
	}
	if s.Int(SubsysAPI, APIRequestsMax) != 0 {
		t.Fatal("value applied although not persisted")
	}
}

func TestLoadSkipsStaleStoredValues(t *testing.T) {
	db := meta.NewMem()
	b := db.NewBatch()
	b.Set([]byte(keyPrefix+SubsysReplication), []byte(`{"workers":"-5","gone":"1","max_retries":"2"}`))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, db, nil)
	if s.Int(SubsysReplication, ReplicationWorkers) != 16 || s.Int(SubsysReplication, ReplicationMaxRetries) != 2 {
		t.Fatal("stale values not skipped")
	}
}

func TestAccessorPanicsOnProgrammingError(t *testing.T) {
	s := newStore(t, meta.NewMem(), nil)
	for name, read := range map[string]func(){
		"unknown key": func() { s.Duration(SubsysTables, "nope") },
		"wrong kind":  func() { s.Duration(SubsysTables, TablesReplicaCatalog) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			read()
		}()
	}
}

func TestConcurrentSetAndRead(t *testing.T) {
	s := newStore(t, meta.NewMem(), nil)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if err := s.Set(context.Background(), SubsysReplication, map[string]string{ReplicationWorkers: "8"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for j := 0; j < 500; j++ {
				if n := s.Int(SubsysReplication, ReplicationWorkers); n != 16 && n != 8 {
					t.Errorf("workers = %d", n)
					return
				}
			}
		}()
	}
	wg.Wait()
}
