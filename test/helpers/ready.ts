/** Resolves once the server at `mcpUrl` says every source was tried (GET /readyz answers 200). */
export async function waitReady(mcpUrl: string, timeoutMs = 30_000): Promise<void> {
  const url = mcpUrl.replace(/\/mcp$/, '/readyz');
  const started = Date.now();
  for (;;) {
    if ((await fetch(url)).status === 200) return;
    if (Date.now() - started > timeoutMs) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
