import { ApiError } from '../../../shared/errors/ApiError';

type Tool = Record<string, unknown> & { type: string };

/**
 * OpenAI's `namespace` tools (NamespaceToolParam: a named group of function tools) on an upstream
 * that only knows flat function tools: each member goes upstream as `<namespace>__<name>`, and a
 * call of that name comes back as `{name, namespace}`, as OpenAI reports a call inside a namespace.
 */
export const NAMESPACE_SEPARATOR = '__';

export const prefixedName = (namespace: string, name: string) => `${namespace}${NAMESPACE_SEPARATOR}${name}`;

/** The function tools of a request's tool list, namespaces flattened (with their description kept). */
export function flatFunctions(tools: Tool[]): Tool[] {
  const out: Tool[] = [];
  for (const t of tools) {
    if (t.type !== 'namespace') {
      out.push(t);
      continue;
    }
    const ns = String(t.name);
    for (const member of (t.tools as Tool[] | undefined) ?? []) {
      if (member.type !== 'function') {
        throw new ApiError(400, 'unsupported_tool', `Tool type '${member.type}' inside namespace '${ns}' is not supported; use function tools.`);
      }
      const description = [t.description, member.description].filter((d) => typeof d === 'string' && d).join('\n\n');
      out.push({ ...member, name: prefixedName(ns, String(member.name)), ...(description ? { description } : {}) });
    }
  }
  const seen = new Set<string>();
  for (const t of out) {
    if (t.type !== 'function') continue;
    const name = String(t.name);
    if (seen.has(name)) throw new ApiError(400, 'invalid_request', `Two tools are named '${name}' once namespaces are flattened; rename one of them.`);
    seen.add(name);
  }
  return out;
}

/** A called name as the caller declared it: `{name, namespace}` for a namespace member. */
export function splitToolName(tools: Tool[] | undefined, called: string): { name: string; namespace?: string } {
  for (const t of tools ?? []) {
    if (t.type !== 'namespace') continue;
    const ns = String(t.name);
    if (!called.startsWith(prefixedName(ns, ''))) continue;
    const name = called.slice(ns.length + NAMESPACE_SEPARATOR.length);
    if (((t.tools as Tool[] | undefined) ?? []).some((m) => m.name === name)) return { name, namespace: ns };
  }
  return { name: called };
}
