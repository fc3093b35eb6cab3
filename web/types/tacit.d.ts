// TypeScript typings for `window.tacit`, the wallet's tool door for pages without WebMCP.
//
// `window.tacit` exists only when the browser has no `document.modelContext` at all: neither
// native WebMCP nor the vendored `@mcp-b/webmcp-polyfill` the page loads without it. With either,
// the wallet's tools are in `document.modelContext` and `window.tacit` is `undefined`.
//
// Every call resolves to an envelope and never throws: `{ok: true, result}` for an answer,
// `{ok: false, isError: true, error: {code, message}}` for a refusal. The codes are
// `capability_gate::Code` (checked by `cargo test -p tacit-web`: every code of `Code` is here and
// nothing else).
//
// Use: `/// <reference path="tacit.d.ts" />` (or add it to `files`/`include` in tsconfig.json).

/** Why a call was refused. */
export type TacitCode =
  | 'invalid_input'
  | 'wallet_locked'
  | 'unknown_request'
  | 'unknown_proposal'
  | 'grant_revoked'
  | 'grant_expired'
  | 'grant_spent'
  | 'declined_privacy_floor'
  | 'invalid_claim'
  | 'nothing_to_draft'
  | 'too_many_pending'
  // Answered by the page itself (the gate busy, or no such tool now):
  | 'busy'
  | 'unknown_tool';

/** An answer. `R` is the tool's result (see each tool's description). */
export interface TacitAnswer<R = unknown> {
  readonly ok: true;
  readonly result: R;
  readonly isError?: never;
  readonly error?: never;
}

/** A refusal: a code and a sentence. Never thrown, always returned. */
export interface TacitRefusal {
  readonly ok: false;
  readonly isError: true;
  readonly error: {
    readonly code: TacitCode;
    readonly message: string;
  };
  readonly result?: never;
}

/** What `window.tacit.call()` resolves to. Narrow on `ok` (or `isError`). */
export type TacitEnvelope<R = unknown> = TacitAnswer<R> | TacitRefusal;

/** The WebMCP annotations every Tacit tool carries. */
export interface TacitToolAnnotations {
  readonly readOnlyHint: boolean;
  readonly untrustedContentHint: boolean;
  readonly consequentialHint: boolean;
}

/** A JSON Schema of a tool's input: always an object schema. */
export interface TacitInputSchema {
  readonly type: 'object';
  readonly properties?: Readonly<Record<string, unknown>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean;
  readonly [keyword: string]: unknown;
}

/** One tool, as `registerTool` would get it (without `execute`). */
export interface TacitTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: TacitInputSchema;
  readonly annotations: TacitToolAnnotations;
}

/** What `window.tacit.status()` says about WebMCP in this browser. */
export type TacitWebmcpStatus =
  | 'available'
  | 'polyfilled'
  | 'scripted'
  | 'absent'
  | 'insecure-context'
  | 'superseded-api'
  | 'registration-refused';

/** A tool's input: a JSON object. */
export type TacitInput = { readonly [key: string]: TacitJson };
export type TacitJson =
  | string
  | number
  | boolean
  | null
  | readonly TacitJson[]
  | { readonly [key: string]: TacitJson };

/** `window.tacit`. */
export interface TacitApi {
  /** The tools that exist now (claim tools only while the person's grant lives). */
  tools(): TacitTool[];
  /** Calls a tool by name. Resolves to an envelope; never rejects. */
  call<R = unknown>(name: string, input?: TacitInput): Promise<TacitEnvelope<R>>;
  /** Why the tools are offered here rather than through WebMCP. */
  status(): TacitWebmcpStatus;
}

declare global {
  interface Window {
    /** Present only without any `document.modelContext` (see the file's header). */
    readonly tacit?: TacitApi;
  }
}
