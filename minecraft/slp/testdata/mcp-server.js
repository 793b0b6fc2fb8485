// Runs minecraft-protocol's server (argv[2] is the package's folder) on
// 127.0.0.1 and a free port, prints the port, and serves until stdin
// closes.
const mc = require(process.argv[2])
const server = mc.createServer({
  'online-mode': false, host: '127.0.0.1', port: 0, version: '1.21.1',
  motd: 'minecraft-protocol \u00a7aserver', maxPlayers: 42
})
server.on('listening', () => console.log(server.socketServer.address().port))
server.on('error', (e) => { console.error(e); process.exit(1) })
process.stdin.on('end', () => process.exit(0))
process.stdin.resume()
