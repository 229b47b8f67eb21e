import { ApiError } from '../../shared/errors/ApiError';

type FnTool = { type: string; function?: { name: string } };

/** What a translating adapter (Anthropic, Gemini, Bedrock) sends: the tools to offer and how the model may use them. */
export interface ToolUse<T extends FnTool> {
  tools: T[];
  /** `named`: that one tool must be called. */
  choice: 'auto' | 'none' | 'required' | { named: string } | undefined;
}

/**
 * The index of the first canonical `tools` entry that is not a function tool with its `function`
 * (only those have a form in the Anthropic, Gemini and Bedrock APIs), or -1.
 */
export function nonFunctionTool(body: Record<string, unknown>): number {
  const tools = Array.isArray(body.tools) ? (body.tools as Array<{ type?: unknown; function?: unknown } | null>) : [];
  return tools.findIndex((t) => t?.type !== 'function' || !t.function);
}

/** 400 `unsupported_parameter` naming the first `tools` entry that is not a function tool (Anthropic's and Gemini's refusal). */
export function refuseNonFunctionTools(body: Record<string, unknown>): void {
  const bad = nonFunctionTool(body);
  if (bad < 0) return;
  const type = String((body.tools as Array<{ type?: unknown } | null>)[bad]?.type);
  throw new ApiError(400, 'unsupported_parameter', `\`tools[${bad}]\` of type '${type}' is not supported on this model.`, { param: `tools[${bad}]` });
}

function unsupported(why: string): ApiError {
  return new ApiError(400, 'unsupported_parameter', `\`tool_choice\` ${why}`, { param: 'tool_choice' });
}

/**
 * The canonical `tool_choice` read for an upstream that is not OpenAI's: `auto`/`none`/`required`,
 * a named function (`{type: 'function', function: {name}}`), or the current SDK's
 * `{type: 'allowed_tools', allowed_tools: {mode, tools}}`, which becomes the function tools it lists,
 * offered alone, with mode `auto` or `required` (every such upstream can express that). A named
 * `custom` tool, an allowed list naming anything but an offered function, or an unknown form: 400
 * `unsupported_parameter` naming `tool_choice`, never a choice without a name.
 */
export function toolUse<T extends FnTool>(tools: T[], c: unknown): ToolUse<T> {
  if (c === undefined || c === null) return { tools, choice: undefined };
  if (c === 'auto' || c === 'none' || c === 'required') return { tools, choice: c };
  const o = (typeof c === 'object' ? c : {}) as { type?: unknown; function?: { name?: unknown }; allowed_tools?: { mode?: unknown; tools?: unknown } };
  if (o.type === 'function' && typeof o.function?.name === 'string' && o.function.name) {
    if (!tools.some((t) => t.function?.name === o.function!.name)) throw unsupported(`names the function '${o.function.name}', which is not in \`tools\`.`);
    return { tools, choice: { named: o.function.name } };
  }
  if (o.type === 'allowed_tools') {
    const { mode, tools: listed } = o.allowed_tools ?? {};
    if ((mode !== 'auto' && mode !== 'required') || !Array.isArray(listed) || !listed.length) throw unsupported("of type 'allowed_tools' needs `allowed_tools.mode` auto or required and a non-empty `allowed_tools.tools`.");
    const names = new Set<string>();
    for (const l of listed as Array<{ type?: unknown; function?: { name?: unknown } }>) {
      const name = l?.type === 'function' ? l.function?.name : undefined;
      if (typeof name !== 'string' || !tools.some((t) => t.type === 'function' && t.function?.name === name)) {
        throw unsupported(`of type 'allowed_tools' can list only function tools given in \`tools\` on this model (got ${JSON.stringify(l)}).`);
      }
      names.add(name);
    }
    return { tools: tools.filter((t) => t.type === 'function' && names.has(t.function!.name)), choice: mode };
  }
  throw unsupported(`of type '${String(o.type)}' is not supported on this model.`);
}
