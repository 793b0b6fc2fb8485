package a2s_test

import (
	"fmt"

	"github.com/gsq-project/gsq/a2s"
)

func ExampleParseInfo() {
	// The Counter-Strike: Source reply from the spec.
	reply := []byte("\xFF\xFF\xFF\xFFI\x02game2xs.com Counter-Strike Source #1\x00de_dust\x00cstrike\x00" +
		"Counter-Strike: Source\x00\xF0\x00\x05\x10\x04dl\x00\x001.0.0.22\x00")
	info, err := a2s.ParseInfo(reply)
	if err != nil {
		fmt.Println(err)
		return
	}
	players, max := info.PlayerCounts()
	fmt.Printf("%s on %s: %d/%d players, %d bots\n", info.Name.UTF8(), info.Map.UTF8(), players, max, info.Bots)
	fmt.Printf("app %d, %s server on %s, version %s\n", info.AppID(), info.ServerType, info.Environment, info.Version)

	_, err = a2s.ParseInfo(reply[:40])
	fmt.Println(err)
	// Output:
	// game2xs.com Counter-Strike Source #1 on de_dust: 5/16 players, 4 bots
	// app 240, dedicated server on linux, version 1.0.0.22
	// a2s: parse info at offset 6: truncated packet: string has no NUL terminator
}

func ExampleReassembler() {
	reply, _ := (&a2s.Rules{List: []a2s.Rule{{Name: a2s.Text("mp_timelimit"), Value: a2s.Text("30")}}}).AppendBinary(nil)
	// A server cuts the reply up; the datagrams arrive in reverse.
	datagrams, _ := a2s.SplitWriter{Size: 64}.AppendFragments(nil, 42, append(reply, make([]byte, 100)...))
	var r a2s.Reassembler
	for i := len(datagrams) - 1; i >= 0; i-- {
		f, err := a2s.ParseFragment(datagrams[i])
		if err != nil {
			fmt.Println(err)
			return
		}
		payload, done, err := r.Add(f)
		if err != nil {
			fmt.Println(err)
			return
		}
		if done {
			rules, err := a2s.ParseRules(payload)
			fmt.Println(len(datagrams), "fragments,", f.Format, "format")
			fmt.Println(rules.List[0].Name, "=", rules.List[0].Value, err)
		}
	}
	// Output:
	// 2 fragments, source format
	// mp_timelimit = 30 <nil>
}
