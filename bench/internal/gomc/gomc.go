// Package gomc runs the RCON server of github.com/Tnze/go-mc (package net,
// ListenRCON), the Minecraft-shaped peer that the RCON benches and interop
// tests put gsq's client against. go-mc sends nothing before the login's
// answer, closes the connection on any request that is not a command (a
// type-0 probe included), and answers each command with the packets its
// handler writes.
package gomc

import (
	"testing"

	mcnet "github.com/Tnze/go-mc/net"
)

// Serve runs go-mc's RCON server on a loopback port until the test ends
// and returns its address. It accepts password and answers each command
// with answer(command); with split > 0 an answer goes out in packets of
// split bytes, cut anywhere (inside a UTF-8 sequence too), as a server
// built on go-mc that splits does.
func Serve(tb testing.TB, password string, split int, answer func(cmd string) string) string {
	tb.Helper()
	l, err := mcnet.ListenRCON("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				if conn.AcceptLogin(password) != nil {
					return
				}
				for {
					cmd, err := conn.AcceptCmd()
					if err != nil {
						return // go-mc closes on anything but a command
					}
					out := answer(cmd)
					for split > 0 && len(out) > split {
						if conn.RespCmd(out[:split]) != nil {
							return
						}
						out = out[split:]
					}
					if conn.RespCmd(out) != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}
