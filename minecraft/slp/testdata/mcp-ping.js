// Pings argv[3] (HOST:PORT) with minecraft-protocol's ping client
// (argv[2] is the package's folder) and prints what it read as JSON. It
// exits once the output is written (a pipe is written asynchronously): after a server that closes instead of
// answering the ping, the peer's promise settles but its socket keeps
// node alive.
const mc = require(process.argv[2])
const [host, port] = process.argv[3].split(':')
mc.ping({ host, port: Number(port), closeTimeout: 10000, noPongTimeout: 3000 })
  .then((d) => process.stdout.write(JSON.stringify(d) + '\n', () => process.exit(0)))
  .catch((e) => { console.error('ping: ' + e.message); process.exit(1) })
