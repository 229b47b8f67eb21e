import type { Directory, OrgContext } from '../tenancy/directory';

/**
 * MCP tool allow/deny per organization (`organizations.policies.mcp_tools`) and per user
 * (`users.policies.mcp_tools`), each a map tool name → `allow` | `deny`. A user's entry wins over the
 * org's; a tool named by neither is allowed. Denied: the MCP server answers `mcp_tool_disabled`.
 * Written by the management API's capability-policies family, which bumps the cache epoch.
 */
export type ToolDecision = 'allow' | 'deny';
export type ToolPolicy = Record<string, ToolDecision>;

function toolPolicy(policies: Record<string, unknown> | null | undefined): ToolPolicy {
  const raw = policies?.mcp_tools;
  return raw && typeof raw === 'object' ? (raw as ToolPolicy) : {};
}

export function mcpToolDecision(org: OrgContext, user: Record<string, unknown> | null, tool: string): ToolDecision {
  return toolPolicy(user)[tool] ?? toolPolicy(org.policies)[tool] ?? 'allow';
}

/** Whether `tool` may run for the org (and user, when the request has one). Call after `directory.sync()`. */
export async function mcpToolAllowed(directory: Directory, org: OrgContext, userId: string | null, tool: string): Promise<boolean> {
  const user = userId ? await directory.userPolicies(userId) : null;
  return mcpToolDecision(org, user, tool) === 'allow';
}
