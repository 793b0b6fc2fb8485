package monitor

import (
	"time"

	"github.com/gsq-project/gsq/internal/yamlconf"
)

// timeZone reads time_zone: the IANA name of the zone the page draws
// when people play in (the heatmap), "UTC", or absent for the host's.
func (d *draft) timeZone(m *yamlconf.Mapping) {
	var name string
	if !m.Str("time_zone", &name) || !m.Has("time_zone") {
		return
	}
	var loc *time.Location
	var err error
	if name != "" && name != "Local" && len(name) <= 64 {
		loc, err = time.LoadLocation(name)
	}
	if loc == nil || err != nil {
		d.p.At(m.Get("time_zone"), "time_zone", "%s is not a time zone: want an IANA name such as Europe/Berlin, or UTC", yamlconf.Quote(name))
		return
	}
	d.cfg.TimeZone = loc
}
