module github.com/gsq-project/gsq

go 1.24
