// The MCP door paired with the vault itself (`tacit-mcp --vault-relay`), through the official
// TypeScript MCP SDK as the client, for mcp/tests/paired.rs. Driven line by line, since the
// person acts in the vault between the agent's calls:
//
// stdin, one JSON object a line:
//   first: { "command": "<path of tacit-mcp>", "args": [...] }   spawns the door over stdio
//   then:  { "id": n, "op": "list" }                              → { "id": n, "tools": [...] }
//          { "id": n, "op": "call", "name": "...", "arguments": {...} }
//                                                                → { "id": n, "result": {...} }
//          { "id": n, "op": "raw" }     → { "id": n, "raw": "<every message the door sent>" }
//          { "op": "close" }            closes the client (the door exits), then this script
// stdout, one JSON object a line, as things happen:
//   { "event": "stderr", "line": "..." }       each line the door wrote on its stderr
//   { "event": "list_changed" }                each notifications/tools/list_changed
//   { "event": "ready", "server": {...}, "instructions": "..." }   after initialize
//   { "id": n, ... }                           the answer to command n ({ "id", "error" } if the
//                                              SDK threw)
//   { "event": "closed" }
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const emit = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
const queue = [];
let wake = null;
let ended = false;
lines.on('line', (line) => {
  if (line.trim() === '') return;
  queue.push(JSON.parse(line));
  if (wake) { wake(); wake = null; }
});
lines.on('close', () => {
  ended = true;
  if (wake) { wake(); wake = null; }
});
async function next() {
  while (queue.length === 0 && !ended) await new Promise((resolve) => { wake = resolve; });
  return queue.shift();
}

const start = await next();
const transport = new StdioClientTransport({
  command: start.command, args: start.args, stderr: 'pipe',
});
let partial = '';
transport.stderr?.on('data', (chunk) => {
  partial += chunk;
  let at;
  while ((at = partial.indexOf('\n')) >= 0) {
    emit({ event: 'stderr', line: partial.slice(0, at) });
    partial = partial.slice(at + 1);
  }
});
const client = new Client({ name: 'tacit-mcp-paired-interop', version: '0.0.0' });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  emit({ event: 'list_changed' });
});
await client.connect(transport);
// Every message the door sent on its stdout, as the SDK read it.
let raw = '';
const deliver = transport.onmessage;
transport.onmessage = (message, extra) => {
  raw += `${JSON.stringify(message)}\n`;
  deliver?.(message, extra);
};
emit({ event: 'ready', server: client.getServerVersion(), instructions: client.getInstructions() });

const running = [];
for (;;) {
  const command = await next();
  if (!command || command.op === 'close') break;
  const { id } = command;
  const answer = (async () => {
    try {
      if (command.op === 'list') {
        emit({ id, tools: (await client.listTools()).tools });
      } else if (command.op === 'call') {
        const result = await client.callTool(
          { name: command.name, arguments: command.arguments ?? {} }, undefined,
          { timeout: command.timeout_ms ?? 60000 });
        emit({ id, result });
      } else if (command.op === 'raw') {
        emit({ id, raw });
      } else {
        emit({ id, error: `no op ${command.op}` });
      }
    } catch (e) {
      emit({ id, error: String(e), code: e.code });
    }
  })();
  running.push(answer);
}
await Promise.allSettled(running);
await client.close().catch(() => {});
if (partial) emit({ event: 'stderr', line: partial });
emit({ event: 'closed' });
process.exit(0);
