package mcquery

import "github.com/gsq-project/gsq/internal/rawtext"

// Text is a string exactly as the server sent it. The vanilla server sends
// UTF-8, but plugins and other servers put Latin-1 and raw bytes in the
// MOTD, so the codec keeps the bytes: String returns every byte, UTF8
// decodes for display (valid UTF-8 as is, other bytes as Latin-1).
type Text = rawtext.Text
