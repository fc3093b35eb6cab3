// Must NOT compile (tests/tests/gate_package.rs checks tsc fails here, on this call): a grant
// without `expiresIn` would be a tool that never expires. If the typings were `any`, it would.
import { ToolGate } from "./pkg/tool_gate_js.js";

const gate = new ToolGate();
gate.grant(
  { name: "add_to_cart", description: "Add an item to the cart.", execute: () => 1 },
  { uses: 1 },
);
