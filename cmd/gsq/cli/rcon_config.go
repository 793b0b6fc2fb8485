package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gsq-project/gsq/internal/yamlconf"
	"github.com/gsq-project/gsq/rcon"
)

// This file reads the named servers of gsq's config file and finds the
// RCON password. The file lives in the XDG config directory:
//
//	servers:
//	  survival:
//	    address: mc.example.com:25575
//	    password_env: SURVIVAL_RCON_PASSWORD
//	    dialect: minecraft
//	    timeout: 5s
//	  rust:
//	    address: rust.example.com
//	    protocol: webrcon   # source, minecraft, webrcon, battleye, palworld, telnet
//
// An unknown key, at the top or inside a server entry, is an error at its
// line and column, with the known key it is closest to, so a typo does not
// go unnoticed.

// rconServer is one named server of the config file.
type rconServer struct {
	Address      string
	Password     string
	PasswordFile string
	PasswordEnv  string
	Dialect      string
	Profile      string
	Protocol     string
	Timeout      time.Duration
}

// rconConfig is the part of the config file gsq rcon reads.
type rconConfig struct {
	path    string
	private bool // the file is not readable by group or others
	servers map[string]rconServer
}

// maxConfigSize bounds the config and password files gsq reads.
const maxConfigSize = 1 << 20

// rconConfigPath is where gsq looks for its config file:
// $XDG_CONFIG_HOME/gsq/config.yaml, else ~/.config/gsq/config.yaml.
// It is empty when neither variable is set.
func rconConfigPath(env *Env) string {
	if dir := env.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "gsq", "config.yaml")
	}
	if home := env.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "gsq", "config.yaml")
	}
	return ""
}

// loadRconConfig reads the named servers from path. A missing file is an
// empty config unless the user named it explicitly.
func loadRconConfig(path string, explicit bool) (*rconConfig, error) {
	c := &rconConfig{path: path}
	if path == "" {
		return c, nil
	}
	data, info, err := readSmallFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return c, nil
	}
	if err != nil {
		return nil, usageError("config: %v", err)
	}
	c.private = info.Mode().Perm()&0o077 == 0
	servers, err := parseRconConfig(path, data)
	if err != nil {
		return nil, usageError("%v", err)
	}
	c.servers = servers
	return c, nil
}

// parseRconConfig reads the servers of the config file at path. Its
// errors list every problem at its line and column, in YAML's terms.
func parseRconConfig(path string, data []byte) (map[string]rconServer, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %s", path, yamlconf.SyntaxMessage(data, err))
	}
	servers := map[string]rconServer{}
	if len(root.Content) == 0 {
		return servers, nil // an empty file
	}
	p := &yamlconf.Problems{Source: path}
	if top := yamlconf.NewMapping(p, "", root.Content[0]); top != nil {
		if n := top.Get("servers"); !yamlconf.IsNull(n) {
			if list := yamlconf.NewMapping(p, "servers", n); list != nil {
				for _, k := range list.Keys {
					servers[k.Value] = readRconServer(p, list.Sub(k.Value), list.Get(k.Value))
				}
			}
		}
		top.Get("steam") // gsq discover's key (discover_key.go)
		top.Done()
	}
	return servers, p.Err("config")
}

// readRconServer reads one server entry.
func readRconServer(p *yamlconf.Problems, path string, n *yaml.Node) rconServer {
	var s rconServer
	m := yamlconf.NewMapping(p, path, n)
	if m == nil {
		return s
	}
	m.Str("address", &s.Address)
	m.Str("password", &s.Password)
	m.Str("password_file", &s.PasswordFile)
	m.Str("password_env", &s.PasswordEnv)
	m.Str("dialect", &s.Dialect)
	m.Str("profile", &s.Profile)
	m.Str("protocol", &s.Protocol)
	m.Duration("timeout", &s.Timeout, 0, math.MaxInt64)
	m.Done()
	return s
}

// nameList returns the configured servers' names, sorted.
func (c *rconConfig) nameList() []string {
	names := make([]string, 0, len(c.servers))
	for n := range c.servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// names lists the configured servers, for error messages.
func (c *rconConfig) names() string { return strings.Join(c.nameList(), ", ") }

// validate checks the entry named name before it is used.
func (s *rconServer) validate(name string) error {
	if s.Address == "" {
		return fmt.Errorf("server %q has no address", name)
	}
	n := 0
	for _, v := range []string{s.Password, s.PasswordFile, s.PasswordEnv} {
		if v != "" {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("server %q: give only one of password, password_file and password_env", name)
	}
	if _, err := rcon.ParseDialect(s.Dialect); err != nil {
		return fmt.Errorf("server %q: %v", name, err)
	}
	if _, err := rcon.LookupProfile(s.Profile); err != nil {
		return fmt.Errorf("server %q: %v", name, err)
	}
	if s.Protocol != "" {
		if _, err := parseProtocol(s.Protocol); err != nil {
			return fmt.Errorf("server %q: %v", name, err)
		}
	}
	return nil
}

// rconPasswordEnv lists the environment variables that may hold the
// password, most specific first. MCRCON_PASS makes gsq a drop-in for mcrcon.
var rconPasswordEnv = []string{"GSQ_RCON_PASSWORD", "RCON_PASSWORD", "MCRCON_PASS"}

// passwordSource says where findPassword should look, in order: the
// --password and --password-file flags, the named server's entry, the
// environment, and a prompt on the terminal.
type passwordSource struct {
	flag       *string // --password, if given
	file       string  // --password-file
	server     *rconServer
	url        *string // the password of an rcon:// URL, if it had one
	configPath string
	prompt     func() (string, error) // nil when stdin is not a terminal
}

// findPassword returns the RCON password. It never puts the password
// in an error.
func findPassword(env *Env, src passwordSource) (string, error) {
	switch {
	case src.flag != nil:
		return *src.flag, nil
	case src.file != "":
		return readPasswordFile(src.file)
	}
	if s := src.server; s != nil {
		switch {
		case s.Password != "":
			return s.Password, nil
		case s.PasswordFile != "":
			return readPasswordFile(expandConfigPath(env, s.PasswordFile, filepath.Dir(src.configPath)))
		case s.PasswordEnv != "":
			if pw := env.Getenv(s.PasswordEnv); pw != "" {
				return pw, nil
			}
			return "", usageError("config %s: password_env %s is not set", src.configPath, s.PasswordEnv)
		}
	}
	if src.url != nil {
		return *src.url, nil
	}
	if pw, err := passwordFromEnv(env); pw != "" || err != nil {
		return pw, err
	}
	if src.prompt != nil {
		return src.prompt()
	}
	return "", &exitError{code: ExitUsage, err: fmt.Errorf("%w: use --password-file FILE, set %s, or name a server of the config file", errNoPassword, strings.Join(rconPasswordEnv, " or "))}
}

// passwordFromEnv is the password the environment gives: the first of
// rconPasswordEnv that is set, else the file $RCON_PASSWORD_FILE names;
// "" when none is.
func passwordFromEnv(env *Env) (string, error) {
	for _, name := range rconPasswordEnv {
		if pw := env.Getenv(name); pw != "" {
			return pw, nil
		}
	}
	if path := env.Getenv("RCON_PASSWORD_FILE"); path != "" {
		return readPasswordFile(path)
	}
	return "", nil
}

// errNoPassword is why findPassword failed when nothing gave a password.
var errNoPassword = errors.New("no RCON password")

// readPasswordFile reads a password file (a Docker secret, for example);
// one trailing line break is not part of the password.
func readPasswordFile(path string) (string, error) {
	data, _, err := readSmallFile(path)
	if err != nil {
		return "", usageError("password file: %v", err)
	}
	pw := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	if pw == "" {
		return "", usageError("password file %s is empty", path)
	}
	return pw, nil
}

// readSmallFile reads a file of at most maxConfigSize bytes.
func readSmallFile(path string) ([]byte, fs.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > maxConfigSize {
		return nil, nil, fmt.Errorf("%s is larger than %d bytes", path, maxConfigSize)
	}
	return data, info, nil
}

// expandConfigPath expands a leading ~/ to the home directory and makes a
// relative path relative to dir.
func expandConfigPath(env *Env, path, dir string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		if home := env.Getenv("HOME"); home != "" {
			return filepath.Join(home, rest)
		}
	}
	if !filepath.IsAbs(path) && dir != "" {
		return filepath.Join(dir, path)
	}
	return path
}
