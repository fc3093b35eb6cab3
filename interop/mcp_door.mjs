// The MCP door (`tacit-mcp`) through the official TypeScript MCP SDK as the client, for
// mcp/tests/sdk.rs. Reads one JSON object on stdin:
//   { "command": "<path of tacit-mcp>", "args": [...], "timeout_ms": 10000,
//     "targets": ["<tool name>", ...],          // tool names the junk calls are aimed at
//     "ok_call": { "name": "...", "arguments": {...} } }
// spawns the door over stdio (StdioClientTransport), and prints one JSON object:
//   { "server": <serverInfo>, "instructions", "tools": <tools/list>,
//     "junk": [{ label, answered, code?, message?, is_error?, ms }],   // one by one
//     "burst": [...],                                                 // the same, all at once
//     "ok": <the ok_call's result>, "stderr": "<the door's stderr>" }
// A junk call is "answered" when a response (a result or a JSON-RPC error) came before the
// client's timeout; the SDK's own timeout error (-32001) counts as not answered.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ErrorCode, McpError, ResultSchema } from '@modelcontextprotocol/sdk/types.js';

const input = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (c) => { text += c; });
  process.stdin.on('end', () => resolve(text));
}));

const nested = (depth, leaf, array) => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = array ? [v] : { a: v };
  return v;
};
const lone = (code) => String.fromCharCode(code);

/** Junk `tools/call` params aimed at `name`: [label, params]. */
function junkFor(name) {
  const out = [];
  for (const [label, args] of [
    ['arguments: empty array', []], ['arguments: array', [1, 2]], ['arguments: string', 'x'],
    ['arguments: empty string', ''], ['arguments: zero', 0], ['arguments: number', 42],
    ['arguments: float', -1.5], ['arguments: true', true], ['arguments: false', false],
  ]) out.push([label, { name, arguments: args }]);
  for (const code of [0xd800, 0xdbff, 0xdc00, 0xdfff]) {
    const s = lone(code);
    const hex = code.toString(16);
    out.push([`lone ${hex} in a value`, { name, arguments: { policy: `a${s}b` } }]);
    out.push([`lone ${hex} in a key`, { name, arguments: { [s]: 1 } }]);
    out.push([`lone ${hex} in an array`, { name, arguments: { claims: [s] } }]);
    out.push([`lone ${hex} nested`, { name, arguments: { policy: { origin: s, nonce: 'n' } } }]);
    out.push([`lone ${hex} at the end`, { name, arguments: { policy: `x${s}` } }]);
  }
  out.push(['reversed pair', { name, arguments: { policy: lone(0xde00) + lone(0xd83d) } }]);
  for (const depth of [33, 64, 127, 129, 200, 1000]) {
    out.push([`${depth}-deep object`, { name, arguments: { policy: nested(depth, 1, false) } }]);
    out.push([`${depth}-deep array`, { name, arguments: { policy: nested(depth, 1, true) } }]);
  }
  out.push(['5 MiB string', { name, arguments: { policy: 'x'.repeat(5 * 1024 * 1024) } }]);
  return out;
}

function junk() {
  const out = [];
  for (const name of input.targets) {
    for (const [label, params] of junkFor(name)) out.push([`${name}: ${label}`, params]);
  }
  for (const [label, params] of [
    ['name missing', { arguments: {} }], ['name number', { name: 7 }], ['name null', { name: null }],
    ['name array', { name: ['a'] }], ['name object', { name: {} }], ['name true', { name: true }],
    ['params string', 'tools'], ['params array', [1]], ['params number', 5],
    ['name deep', { name: nested(200, 'x', true) }],
  ]) out.push([label, params]);
  for (const code of [0xd800, 0xdbff, 0xdc00, 0xdfff]) {
    out.push([`lone ${code.toString(16)} in the name`, { name: `claim.${lone(code)}` }]);
  }
  return out;
}

const transport = new StdioClientTransport({
  command: input.command, args: input.args, stderr: 'pipe',
});
let stderr = '';
transport.stderr?.on('data', (c) => { stderr += c; });
const client = new Client({ name: 'tacit-mcp-interop', version: '0.0.0' });
await client.connect(transport);

const timeout = input.timeout_ms ?? 10000;
async function send(label, params) {
  const start = Date.now();
  try {
    const result = await client.request({ method: 'tools/call', params }, CallToolResultSchema,
      { timeout });
    return { label, answered: true, is_error: result.isError === true, ms: Date.now() - start };
  } catch (e) {
    const ms = Date.now() - start;
    if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) {
      return { label, answered: false, code: e.code, ms };
    }
    if (e instanceof McpError) return { label, answered: true, code: e.code, message: e.message, ms };
    return { label, answered: false, message: String(e), ms };
  }
}

const calls = junk();
const one_by_one = [];
for (const [label, params] of calls) one_by_one.push(await send(label, params));
const burst = await Promise.all(calls.map(([label, params]) => send(label, params)));
const failed = (e) => ({ failed: String(e), code: e.code });
const ok = input.ok_call
  ? await client.callTool({ name: input.ok_call.name, arguments: input.ok_call.arguments })
    .catch(failed)
  : null;
// A method the door does not have is the one thing that is method-not-found.
const unknown = await client.request({ method: 'tacit/no-such-method', params: {} }, ResultSchema)
  .then(() => null, (e) => ({ code: e.code, message: e.message }));
const tools = await client.listTools().then((r) => r.tools, failed);
const out = {
  server: client.getServerVersion(),
  instructions: client.getInstructions(),
  tools,
  junk: one_by_one,
  burst,
  ok,
  unknown,
};
await client.close().catch(() => {});
out.stderr = stderr;
process.stdout.write(JSON.stringify(out));
