package console

import (
	"net/http"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/config"
)

// subsystems are the settings the Server page shows, in order.
var subsystems = []string{config.SubsysAPI, config.SubsysReplication, config.SubsysTables}

// ServerView answers GET /api/server.
type ServerView struct {
	Info   adminclient.ServerInfo     `json:"info"`
	Config []adminclient.SubsysConfig `json:"config"`
	// ConfigError says why the settings are not shown (the user may not
	// read them: admin:ConfigUpdate).
	ConfigError string `json:"configError,omitempty"`
}

func (c *Console) server(w http.ResponseWriter, r *http.Request, cl *call) error {
	info, err := cl.cl.admin.ServerInfo(cl.ctx)
	if err != nil {
		return err
	}
	v := ServerView{Info: info, Config: []adminclient.SubsysConfig{}}
	for _, sub := range subsystems {
		cfg, err := cl.cl.admin.GetConfig(cl.ctx, sub)
		if err != nil {
			body, _ := classify(err)
			v.ConfigError = body.Message
			break
		}
		v.Config = append(v.Config, cfg)
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// setConfig changes settings of one subsystem (the page has asked the user
// to confirm); the admin API validates and may refuse the change.
func (c *Console) setConfig(w http.ResponseWriter, r *http.Request, cl *call) error {
	var kv map[string]string
	if err := decodeBody(r, &kv); err != nil {
		return err
	}
	out, err := cl.cl.admin.SetConfig(cl.ctx, r.PathValue("subsys"), kv)
	if err != nil {
		return err
	}
	c.log.Info("console config change", "subsys", out.Subsys, "accessKey", cl.sess.accessKey)
	writeJSON(w, http.StatusOK, out)
	return nil
}
