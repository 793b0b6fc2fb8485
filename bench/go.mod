module github.com/gsq-project/gsq/bench

go 1.26.0

require (
	github.com/Tnze/go-mc v1.20.2
	github.com/gorcon/rcon v1.4.0
	github.com/gsq-project/gsq v0.0.0
	github.com/rumblefrog/go-a2s v1.0.2
)

require github.com/google/uuid v1.6.0 // indirect

replace github.com/gsq-project/gsq => ../
