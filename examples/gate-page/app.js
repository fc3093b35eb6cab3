// The corner shop: its one tool, `add_to_cart`, exists for an agent only while the person
// allows it. Everything about the grant goes through the tool-gate-js package.
import init, { ToolGate } from "./pkg/tool_gate_js.js";

const TOOL = "add_to_cart";
const SHELF = ["apples", "bread", "milk", "coffee"];
// `?short=1`: a "minute" lasts 1.5 s (for tests and for trying expiry by hand).
const MINUTE = new URLSearchParams(location.search).has("short") ? 1500 : 60_000;

const $ = (selector) => document.querySelector(selector);
const cart = [];

const addToCart = {
  name: TOOL,
  description: `Add an item from the corner shop's shelf (${SHELF.join(", ")}) to the person's cart.`,
  inputSchema: {
    type: "object",
    properties: {
      item: { type: "string", enum: SHELF },
      quantity: { type: "integer", minimum: 1, maximum: 10 },
    },
    required: ["item"],
  },
  annotations: { readOnlyHint: false },
  execute(input) {
    const item = input?.item;
    if (!SHELF.includes(item)) {
      return { ok: false, isError: true, error: { code: "not_on_shelf", message: `The shelf has ${SHELF.join(", ")}.` } };
    }
    const quantity = Number.isInteger(input.quantity) ? Math.min(Math.max(input.quantity, 1), 10) : 1;
    cart.push({ item, quantity });
    renderCart();
    logEvent("call", `The agent added ${quantity} × ${item} to your cart.`);
    return { ok: true, result: { added: { item, quantity }, cart: cart.map((c) => ({ ...c })) } };
  },
};

function renderCart() {
  const list = $("#cart");
  list.replaceChildren(
    ...(cart.length
      ? cart.map(({ item, quantity }) => li(`${quantity} × ${item}`))
      : [li("Empty.", "empty")]),
  );
}

function renderGrants(gate) {
  const live = gate.tools();
  $("#grants").replaceChildren(
    ...(live.length
      ? live.map((g) => {
          const seconds = Math.max(0, Math.ceil((g.expiresAt - Date.now()) / 1000));
          const uses = g.usesLeft === null ? "any number of uses" : `${g.usesLeft} use${g.usesLeft === 1 ? "" : "s"} left`;
          const item = li(`${g.name}: ${seconds} s left, ${uses}`);
          item.dataset.tool = g.name;
          return item;
        })
      : [li("None: the agent has no tool on this page.", "empty")]),
  );
  $("#revoke").disabled = live.length === 0;
}

function logEvent(kind, text, reason) {
  const item = li(`${new Date().toLocaleTimeString()}: ${text}`);
  item.dataset.kind = kind;
  if (reason) item.dataset.reason = reason;
  $("#events").append(item);
}

function li(text, className) {
  const item = document.createElement("li");
  item.textContent = text;
  if (className) item.className = className;
  return item;
}

const WHY = {
  revoked: "you revoked it",
  expired: "its time ran out",
  spent: "its use was taken",
};

async function main() {
  await init();
  let gate;
  try {
    gate = new ToolGate();
  } catch (error) {
    $("#status").textContent = `The agent cannot be offered anything here: ${error.message}`;
    $("#status").dataset.ok = "false";
    document.body.dataset.ready = "no-webmcp";
    return;
  }
  $("#status").textContent = "WebMCP is available: nothing is offered to an agent until you click.";
  $("#status").dataset.ok = "true";

  gate.on("added", (e) => {
    const uses = e.usesLeft === null ? "" : ` (${e.usesLeft} use${e.usesLeft === 1 ? "" : "s"})`;
    logEvent("added", `The agent may now use ${e.name}${uses}.`);
    renderGrants(gate);
  });
  gate.on("removed", (e) => {
    logEvent("removed", `${e.name} is gone: ${WHY[e.reason]}${e.error ? ` (${e.error})` : ""}.`, e.reason);
    renderGrants(gate);
  });

  const grant = (options) => {
    try {
      gate.grant(addToCart, options);
    } catch (error) {
      logEvent("error", `Could not offer ${TOOL}: ${error.message}`);
    }
    renderGrants(gate);
  };
  $("#grant-minute").addEventListener("click", () => grant({ expiresIn: MINUTE }));
  $("#grant-once").addEventListener("click", () => grant({ expiresIn: MINUTE, uses: 1 }));
  $("#revoke").addEventListener("click", () => {
    gate.revoke(TOOL);
    renderGrants(gate);
  });
  $("#grant-minute").disabled = false;
  $("#grant-once").disabled = false;
  setInterval(() => renderGrants(gate), 250);
  renderGrants(gate);
  document.body.dataset.ready = "1";
}

main().catch((error) => {
  $("#status").textContent = `The page failed to start: ${error}`;
  $("#status").dataset.ok = "false";
  document.body.dataset.ready = "failed";
});
