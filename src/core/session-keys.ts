// The two session-key forms of §2.1. `svc` is a fixed literal; ids never contain `:`, so the thread_id (which
// may) is always the unambiguous last part.

/** The key the service stores and returns to apps: `svc:{agent_id}:{app_id}:{thread_id}`. */
export function storedSessionKey(agentId: string, appId: string, threadId: string): string {
  return `svc:${agentId}:${appId}:${threadId}`;
}

/** The key the agent receives, without agent_id: `svc:{app_id}:{thread_id}`. */
export function agentSessionKey(appId: string, threadId: string): string {
  return `svc:${appId}:${threadId}`;
}
