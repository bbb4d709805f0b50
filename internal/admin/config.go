package admin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// getConfig answers GET config/{subsys} with every setting of the subsystem.
func (s *Server) getConfig(w http.ResponseWriter, r *http.Request, _ *call) error {
	return s.writeConfig(w, r.PathValue("subsys"))
}

// setConfig applies PUT config/{subsys}, a JSON object of key to value, and
// answers with the subsystem's settings after the change.
func (s *Server) setConfig(w http.ResponseWriter, r *http.Request, c *call) error {
	subsys := r.PathValue("subsys")
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	var kv map[string]string
	if err := json.Unmarshal(body, &kv); err != nil {
		return fmt.Errorf("%w: want a JSON object of string values: %v", ErrBadRequest, err)
	}
	if len(kv) == 0 {
		return fmt.Errorf("%w: no settings given", ErrBadRequest)
	}
	c.msg = describeChange(subsys, kv)
	if err := s.cfg.Settings.Set(r.Context(), subsys, kv); err != nil {
		return err
	}
	s.log.Info("config changed", "change", c.msg, "remote", r.RemoteAddr)
	return s.writeConfig(w, subsys)
}

func (s *Server) writeConfig(w http.ResponseWriter, subsys string) error {
	kvs, err := s.cfg.Settings.Get(subsys)
	if err != nil {
		return err
	}
	out := adminclient.SubsysConfig{Subsys: subsys, Keys: make([]adminclient.ConfigKV, len(kvs))}
	for i, kv := range kvs {
		out.Keys[i] = adminclient.ConfigKV{Key: kv.Key, Value: kv.Value, Source: string(kv.Source), Help: kv.Help}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// describeChange renders a change as "subsys k=v k=v", keys sorted.
func describeChange(subsys string, kv map[string]string) string {
	parts := make([]string, 0, len(kv))
	for k, v := range kv {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return subsys + " " + strings.Join(parts, " ")
}

// readBody reads a bounded request body and checks it against the signed
// X-Amz-Content-Sha256: the signature covers that header, not the body, so
// without this check a body could be swapped in transit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, fmt.Errorf("%w: body larger than %d bytes", ErrBadRequest, tooBig.Limit)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read body: %v", ErrBadRequest, err)
	}
	want, err := hex.DecodeString(r.Header.Get("X-Amz-Content-Sha256"))
	sum := sha256.Sum256(body)
	if err != nil || !bytes.Equal(want, sum[:]) {
		return nil, ErrContentSHA256Mismatch
	}
	return body, nil
}
