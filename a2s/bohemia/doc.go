// Package bohemia decodes what Bohemia Interactive's games put into A2S
// beyond Valve's protocol (the Valve Developer Community page "Server
// queries"), as their servers send it and as the Bohemia Interactive
// Community wiki's page "Arma 3: ServerBrowserProtocol3" describes it:
//
//   - DayZ and Arma 3 servers spread a binary Server Browser Protocol
//     message over their A2S_RULES reply. [Message] collects its chunks
//     from the rules and removes the escaping; [Decode] reads the mod and
//     signature lists of a version 2 (DayZ) message, and [Browser.Append]
//     writes one, so a Go server can advertise its mods the same way.
//   - Both games pack server facts into the A2S_INFO keywords:
//     [ParseDayZTags] and [ParseArma3Tags] read them.
//
// Everything here works on values already parsed by package a2s and uses
// the standard library only.
//
// # What is certain and what is not
//
// The chunking (rules named by two raw bytes: the chunk's number from 1
// and the chunk count) and the escaping (0x01 0x01 for 0x01, 0x01 0x02 for
// 0x00, 0x01 0x03 for 0xFF, so that no value holds a NUL) are shared by
// the open-source readers we know of (gamedig, GameQ and the Go and
// Python A2S libraries that read DayZ and Arma 3). The version 2 layout is
// the one gamedig's DayZ reader understands, and the interop test checks
// that gamedig reads the mod list [Browser.Append] writes. The body of
// version 3 (Arma 3) adds difficulty and DLC fields whose layout could not
// be confirmed here against a capture or a second implementation, so
// [Decode] reports [ErrVersion] for it rather than guess; [Message] still
// returns its bytes.
package bohemia
