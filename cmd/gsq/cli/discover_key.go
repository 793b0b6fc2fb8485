package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gsq-project/gsq/internal/yamlconf"
)

// This file finds the Steam Web API key of `gsq discover` and of the
// monitor's discovery: --key, then STEAM_API_KEY, then gsq's config file
// (the one of gsq rcon's named servers):
//
//	steam:
//	  api_key: 0123456789ABCDEF0123456789ABCDEF
//	  # or: api_key_file: /run/secrets/steam_api_key
//
// gsq ships no key: Valve revoked a shared one once it was used to find
// players and attack their servers. The key never appears in a message.

// steamKeyEnv is the environment variable that may hold the key.
const steamKeyEnv = "STEAM_API_KEY"

// steamKey returns the key: flag when given (fromFlag), else the
// environment's, else the config file's. No key is a usage error that
// says where to put one.
func steamKey(env *Env, flag string, fromFlag bool) (string, error) {
	if fromFlag {
		return strings.TrimSpace(flag), nil
	}
	if k := strings.TrimSpace(env.Getenv(steamKeyEnv)); k != "" {
		return k, nil
	}
	path := rconConfigPath(env)
	k, err := steamKeyFromConfig(env, path)
	if err != nil {
		return "", err
	}
	if k == "" {
		where := "gsq's config file"
		if path != "" {
			where = path
		}
		return "", usageError("no Steam Web API key: give --key, set %s, or put steam: {api_key: KEY} in %s (get a key at https://steamcommunity.com/dev/apikey; gsq ships none)", steamKeyEnv, where)
	}
	return k, nil
}

// steamKeyFromConfig reads the key from the config file at path: "" when
// the file or its steam section is missing. A key in a file others may
// read gets a hint on stderr.
func steamKeyFromConfig(env *Env, path string) (string, error) {
	if path == "" {
		return "", nil
	}
	data, info, err := readSmallFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", usageError("config: %v", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return "", usageError("%s: %s", path, yamlconf.SyntaxMessage(data, err))
	}
	if len(root.Content) == 0 {
		return "", nil
	}
	p := &yamlconf.Problems{Source: path}
	var key, file string
	if top := yamlconf.NewMapping(p, "", root.Content[0]); top != nil {
		if n := top.Get("steam"); !yamlconf.IsNull(n) {
			if m := yamlconf.NewMapping(p, "steam", n); m != nil {
				m.Str("api_key", &key)
				m.Str("api_key_file", &file)
				m.Done()
			}
		}
	}
	if err := p.Err("config"); err != nil {
		return "", usageError("%v", err)
	}
	if key != "" && info.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(env.Stderr, "gsq: hint: %s holds the Steam Web API key and others can read it; run: chmod 600 %s\n", path, path)
	}
	switch {
	case key != "" && file != "":
		return "", usageError("%s: steam: give api_key or api_key_file, not both", path)
	case file != "":
		data, _, err := readSmallFile(file)
		if err != nil {
			return "", usageError("steam.api_key_file: %v", err)
		}
		key = string(data)
	}
	return strings.TrimSpace(key), nil
}
