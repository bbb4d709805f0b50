package benchcmd

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// consoleAPI is where a site serves the browser console's JSON API.
const consoleAPI = "/twinlake/console/api/"

// consoleBudget is the server time a console page may take.
const consoleBudget = 200 * time.Millisecond

type benchConsoleFlags struct {
	requests  int
	warehouse string
	namespace string
	insecure  bool
}

func newBenchConsoleCmd(opts *cmdutil.Options) *cobra.Command {
	var f benchConsoleFlags
	cmd := &cobra.Command{
		Use:   "console ALIAS",
		Short: "Time the browser console's pages against a site",
		Long: `Signs in to the site's browser console with the alias's credentials and asks
for each page's data --requests times, one after another: the Sites and Tables
DR pages, the first page of buckets and of the first bucket's objects, the
warehouses, the namespaces and first page of tables of a warehouse (--warehouse
and --namespace, or the first ones found), and the Server page. It prints, per
page, the median, 90th percentile and maximum of the server time (the console's
Server-Timing header) and of the round trip, and whether the median server time
is within the 200 ms budget. Nothing is written to the site.`,
		Example: `  twinlake bench console site1
  twinlake bench console site1 --warehouse lake --namespace sales --requests 50 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBenchConsole(cmd, opts, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.requests, "requests", 20, "requests per page (1 to 10000)")
	fl.StringVar(&f.warehouse, "warehouse", "", "warehouse whose namespaces and tables to time (default the first)")
	fl.StringVar(&f.namespace, "namespace", "", "namespace whose tables to time (default the warehouse's first)")
	fl.BoolVar(&f.insecure, "insecure", false, "do not verify the site's TLS certificate")
	return cmd
}

// ConsolePageRow is one page's timings.
type ConsolePageRow struct {
	Page         string  `json:"page"`
	Path         string  `json:"path"`
	Requests     int     `json:"requests"`
	ServerP50Ms  float64 `json:"server_p50_ms"`
	ServerP90Ms  float64 `json:"server_p90_ms"`
	ServerMaxMs  float64 `json:"server_max_ms"`
	RoundP50Ms   float64 `json:"round_trip_p50_ms"`
	WithinBudget bool    `json:"within_budget"`
}

// BenchConsoleReport is bench console's --json answer.
type BenchConsoleReport struct {
	Alias    string           `json:"alias"`
	BudgetMs float64          `json:"budget_ms"`
	Results  []ConsolePageRow `json:"results"`
}

// consoleSession is a signed-in console client.
type consoleSession struct {
	base string
	hc   *http.Client
	csrf string
}

func runBenchConsole(cmd *cobra.Command, opts *cmdutil.Options, aliasName string, f benchConsoleFlags) error {
	if f.requests < 1 || f.requests > 10000 {
		return fmt.Errorf("--requests must be 1 to 10000")
	}
	a, err := opts.LookupAlias(aliasName)
	if err != nil {
		return err
	}
	s, err := consoleSignIn(a, f.insecure)
	if err != nil {
		return err
	}
	defer s.call(http.MethodPost, "logout", nil, nil)
	pages, err := s.pages(f)
	if err != nil {
		return err
	}
	rep := BenchConsoleReport{Alias: aliasName, BudgetMs: ms(consoleBudget)}
	for _, p := range pages {
		row, err := s.time(p[0], p[1], f.requests)
		if err != nil {
			return err
		}
		rep.Results = append(rep.Results, row)
	}
	out := cmd.OutOrStdout()
	if opts.JSON {
		return cmdutil.PrintResult(out, opts, rep, "")
	}
	fmt.Fprintf(out, "bench console %s: %d requests per page, server-time budget %v\n", aliasName, f.requests, consoleBudget)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PAGE\tSERVER P50\tP90\tMAX\tROUND TRIP P50\tBUDGET")
	for _, r := range rep.Results {
		verdict := "ok"
		if !r.WithinBudget {
			verdict = "OVER"
		}
		fmt.Fprintf(tw, "%s\t%.2f ms\t%.2f ms\t%.2f ms\t%.2f ms\t%s\n", r.Page, r.ServerP50Ms, r.ServerP90Ms, r.ServerMaxMs, r.RoundP50Ms, verdict)
	}
	return tw.Flush()
}

func consoleSignIn(a cmdutil.Alias, insecure bool) (*consoleSession, error) {
	if a.SessionToken != "" {
		return nil, fmt.Errorf("the console signs in with an access key and secret key, not a temporary credential")
	}
	jar, _ := cookiejar.New(nil)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if insecure {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	}
	s := &consoleSession{base: strings.TrimSuffix(a.URL, "/") + consoleAPI, hc: &http.Client{Jar: jar, Transport: tr, Timeout: time.Minute}}
	var info struct {
		CSRF string `json:"csrf"`
	}
	if _, err := s.call(http.MethodPost, "login", map[string]string{"accessKey": a.AccessKey, "secretKey": a.SecretKey}, &info); err != nil {
		return nil, fmt.Errorf("console sign-in: %w", err)
	}
	s.csrf = info.CSRF
	return s, nil
}

// call makes one console API call and returns its server time.
func (s *consoleSession) call(method, path string, in, out any) (time.Duration, error) {
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, body)
	if err != nil {
		return 0, err
	}
	if s.csrf != "" {
		req.Header.Set("X-Twinlake-CSRF", s.csrf)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode/100 != 2 {
		var e struct{ Code, Message string }
		_ = json.Unmarshal(data, &e)
		return 0, fmt.Errorf("%s %s: %d %s: %s", method, path, resp.StatusCode, e.Code, e.Message)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return 0, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return serverTiming(resp.Header.Get("Server-Timing")), nil
}

// serverTiming reads "console;dur=1.234" (milliseconds).
func serverTiming(h string) time.Duration {
	_, v, ok := strings.Cut(h, "dur=")
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0
	}
	return time.Duration(f * float64(time.Millisecond))
}

// pages returns the pages to time (name, path), finding a bucket, a
// warehouse and a namespace to open.
func (s *consoleSession) pages(f benchConsoleFlags) ([][2]string, error) {
	pages := [][2]string{{"sites", "sites"}, {"tables-dr", "tables-dr?limit=100"}, {"buckets", "buckets?limit=100"}}
	var bl struct {
		Buckets []struct{ Name string } `json:"buckets"`
	}
	if _, err := s.call(http.MethodGet, "buckets?limit=1", nil, &bl); err != nil {
		return nil, err
	}
	if len(bl.Buckets) > 0 {
		pages = append(pages, [2]string{"objects", "buckets/" + url.PathEscape(bl.Buckets[0].Name) + "/objects?limit=200"})
	}
	pages = append(pages, [2]string{"warehouses", "warehouses"})
	wh := f.warehouse
	if wh == "" {
		var wl struct {
			Warehouses []struct{ Name string } `json:"warehouses"`
		}
		if _, err := s.call(http.MethodGet, "warehouses", nil, &wl); err != nil {
			return nil, err
		}
		if len(wl.Warehouses) > 0 {
			wh = wl.Warehouses[0].Name
		}
	}
	if wh != "" {
		nsPath := "warehouses/" + url.PathEscape(wh) + "/namespaces"
		pages = append(pages, [2]string{"namespaces", nsPath})
		ns := f.namespace
		if ns == "" {
			var nl struct {
				Namespaces [][]string `json:"namespaces"`
			}
			if _, err := s.call(http.MethodGet, nsPath, nil, &nl); err != nil {
				return nil, err
			}
			if len(nl.Namespaces) > 0 {
				ns = strings.Join(nl.Namespaces[0], ".")
			}
		}
		if ns != "" {
			pages = append(pages, [2]string{"tables", "warehouses/" + url.PathEscape(wh) + "/tables?limit=200&namespace=" + url.QueryEscape(ns)})
		}
	}
	return append(pages, [2]string{"server", "server"}), nil
}

// time asks for one page n times.
func (s *consoleSession) time(name, path string, n int) (ConsolePageRow, error) {
	server := make([]time.Duration, 0, n)
	round := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		st, err := s.call(http.MethodGet, path, nil, nil)
		if err != nil {
			return ConsolePageRow{}, err
		}
		round = append(round, time.Since(t0))
		server = append(server, st)
	}
	slices.Sort(server)
	slices.Sort(round)
	pct := func(d []time.Duration, p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))] }
	return ConsolePageRow{Page: name, Path: path, Requests: n,
		ServerP50Ms: ms(pct(server, .5)), ServerP90Ms: ms(pct(server, .9)), ServerMaxMs: ms(server[len(server)-1]),
		RoundP50Ms: ms(pct(round, .5)), WithinBudget: pct(server, .5) <= consoleBudget}, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
