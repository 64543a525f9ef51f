// Benchmark 2's stand-in for the helper, for the floor turn (floor-turn.ts): it answers every
// line on its Unix socket at once with a line, so the round trips cost what the socket costs.
//
//   line-echo SOCKET      prints "ready" once it listens; stops at SIGTERM
import { createServer } from 'node:net';

const socketPath = process.argv[2];
if (!socketPath) throw new Error('usage: line-echo SOCKET');
const server = createServer((socket) => {
  socket.on('data', (chunk) => {
    for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) socket.write('{"ok":true}\n');
  });
  socket.on('error', () => socket.destroy());
});
server.listen(socketPath, () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
