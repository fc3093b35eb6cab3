// Compiled by tests/tests/gate_package.rs with `tsc --noEmit --strict` against the generated
// pkg/tool_gate_js.d.ts: the package's API as a TypeScript page uses it.
import init, { ToolGate } from "./pkg/tool_gate_js.js";
import type { GateEvent, GateTool, GrantInfo, GrantOptions, RemovedEvent } from "./pkg/tool_gate_js.js";

await init();
const gate: ToolGate = new ToolGate();

const tool: GateTool = {
  name: "add_to_cart",
  description: "Add an item to the cart.",
  inputSchema: { type: "object", properties: { item: { type: "string" } } },
  annotations: { readOnlyHint: false },
  async execute(input: { item: string }) {
    return { ok: true, result: { added: input.item } };
  },
};
const once: GrantOptions = { expiresIn: 60_000, uses: 1 };
const info: GrantInfo = gate.grant(tool, once);
const expiresAt: number = info.expiresAt;
const usesLeft: number | null = info.usesLeft;
gate.grant(tool, { expiresIn: 5_000 });

gate.on("removed", (event: GateEvent) => {
  if (event.type === "removed") {
    const reason: "revoked" | "expired" | "spent" = event.reason;
    console.log(event.name, reason);
  } else {
    console.log(event.name, event.expiresAt, event.usesLeft);
  }
});
const onRemoved = (event: GateEvent) => void (event as RemovedEvent);
gate.on("added", onRemoved);
gate.off("added", onRemoved);

const live: GrantInfo[] = gate.tools();
const wasLive: boolean = gate.revoke("add_to_cart");
const count: number = gate.revokeAll();
console.log(expiresAt, usesLeft, live.length, wasLive, count);
