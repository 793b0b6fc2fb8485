package monitor

import "github.com/gsq-project/gsq/internal/yamlconf"

// Problem is one thing wrong with a config, at a place in its file.
type Problem = yamlconf.Problem

// ConfigError lists what is wrong with a config: every problem found, not
// only the first, each at its place. Its message starts "monitor: config".
type ConfigError = yamlconf.Error
