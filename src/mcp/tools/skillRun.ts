import {
  CLIENT_CAPABILITIES_META_KEY,
  type CallToolResult,
  type ClientCapabilities,
  inputRequired,
  inputResponse,
  type McpServer,
  type ServerContext,
  type ToolAnnotations,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { isModernProtocol } from '../protocol.ts';
import { MAX_ARGS } from '../../run/limits.ts';
import type { Prepared, RunRefusal } from '../../run/plan.ts';
import type { Runner } from '../../run/runner.ts';
import { toolOrigin, originSchema, type ToolDeps } from './common.ts';
import { findSkill } from './find.ts';
import { renderConfirmation, renderOutcome, renderRefusal, renderWillRun } from './skillRunRender.ts';

const inputSchema = z.object({
  uri: z.string().optional().describe("the skill:// URI of the skill's SKILL.md"),
  name: z.string().optional().describe('the skill name, when no uri is given'),
  source: z.string().optional().describe('with name: the source id to look in'),
  script: z.string().describe('a script the skill declares, relative to its folder (skill_list names them)'),
  args: z
    .array(z.string())
    .max(MAX_ARGS)
    .default([])
    .describe('arguments, passed to the script exactly as given (no shell)'),
  confirmToken: z
    .string()
    .optional()
    .describe('the token of an earlier call with the same arguments, once the run was approved'),
});

const willRunSchema = z.object({
  source: z.string(),
  commit: z.string(),
  skill: z.string(),
  uri: z.string(),
  script: z.string(),
  digest: z.string(),
  interpreter: z.string(),
  interpreterPath: z.string(),
  argv: z.array(z.string()),
  cwd: z.string(),
  timeoutMs: z.number(),
  envNames: z.array(z.string()),
  envNotSet: z.array(z.string()).optional(),
  egress: z.array(z.string()).optional(),
});

const outputSchema = z.object({
  status: z.enum(['confirmation-required', 'ran', 'declined', 'refused']),
  origin: originSchema.optional(),
  preview: z.object({ willRun: willRunSchema }).optional(),
  confirmToken: z.string().optional(),
  expiresAt: z.string().optional(),
  exitCode: z.number().nullable().optional(),
  signal: z.string().nullable().optional(),
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  truncated: z.boolean().optional(),
  timedOut: z.boolean().optional(),
  cancelled: z.boolean().optional(),
  durationMs: z.number().optional(),
  code: z.string().optional(),
  reason: z.string().optional(),
  detail: z.string().optional(),
});

// Whatever a declared script does is unknown here: it is treated as changing things (not read-only, not idempotent).
const RUNS_CODE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

const config = {
  title: 'Run a skill script',
  description:
    "Run a script a skill declares (its mcp-host: block) and this server's owner granted, from the exact " +
    'files of the pinned commit. The first call runs nothing: it returns a preview of exactly what would run ' +
    'and a confirmToken; call again with the same arguments and the token once the run is approved. Returns ' +
    'exit code, stdout and stderr (1 MiB each at most). Not a sandbox: the script runs as the server user.',
  inputSchema,
  outputSchema,
  annotations: RUNS_CODE,
};

const CONFIRM_KEY = 'confirm';
const confirmSchema = {
  type: 'object' as const,
  properties: {
    [CONFIRM_KEY]: {
      type: 'boolean' as const,
      title: 'Run it',
      description: 'Run this script once, as shown',
    },
  },
  required: [CONFIRM_KEY],
};

function refused(refusal: RunRefusal, prepared?: Prepared): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: renderRefusal(refusal) }],
    // structuredContent, sent to the client as it is built: what a refusal does not know, it has no key for.
    structuredContent: {
      status: 'refused',
      ...(prepared === undefined ? {} : { origin: toolOrigin(prepared.served) }),
      code: refusal.code,
      ...(refusal.reason === undefined ? {} : { reason: refusal.reason }),
      detail: refusal.detail,
    },
  };
}

/** A host that can show a form (elicitation) to its user: on this request, or on this connection. */
function canElicit(mcp: McpServer, ctx: ServerContext): boolean {
  const capabilities = isModernProtocol(mcp.server.getNegotiatedProtocolVersion())
    ? ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
        | ClientCapabilities
        | undefined)
    : mcp.server.getClientCapabilities();
  const elicitation = capabilities?.elicitation;
  return elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined);
}

async function execute(
  runner: Runner,
  prepared: Prepared,
  confirmation: { token: string; caller: string },
  signal: AbortSignal,
): Promise<CallToolResult> {
  const result = await runner.run(prepared, confirmation.token, confirmation.caller, signal);
  if (!result.ok) return refused(result.refusal, prepared);
  const { outcome } = result;
  const { willRun } = prepared;
  return {
    content: [{ type: 'text', text: renderOutcome(willRun, outcome) }],
    structuredContent: {
      status: 'ran',
      origin: toolOrigin(prepared.served),
      preview: { willRun },
      exitCode: outcome.exitCode,
      signal: outcome.signal,
      stdout: outcome.stdout,
      stderr: outcome.stderr,
      truncated: outcome.truncated,
      timedOut: outcome.timedOut,
      cancelled: outcome.cancelled,
      durationMs: outcome.durationMs,
    },
  };
}

/**
 * skill_run: confirmation always. A host that can show a prompt is asked through elicitation (unless
 * `runs.elicitation` is off), with the token riding as the request state; any other host gets a preview and a
 * token it must send back (`runs.confirm`: the user approves, the model does, or such hosts are refused).
 */
export function registerSkillRun(
  mcp: McpServer,
  { serving, runner, caller }: ToolDeps & { runner: Runner },
): void {
  mcp.registerTool('skill_run', config, async (input, ctx) => {
    if ((input.uri === undefined) === (input.name === undefined))
      return refused({ code: 'run-skill-not-found', detail: 'give exactly one of uri or name' });
    const found = findSkill(
      serving(),
      input.uri !== undefined ? { uri: input.uri } : { name: input.name, source: input.source },
    );
    if (!found.ok) return refused({ code: 'run-skill-not-found', detail: found.message });
    const prepare = runner.prepare(found.served, input.script, input.args);
    if (!prepare.ok) return refused(prepare.refusal);
    const { prepared } = prepare;
    const { settings } = runner;

    // Back from the prompt: the request state is the token the prompt was shown for.
    const state = ctx.mcpReq.requestState<string>();
    if (typeof state === 'string') {
      const answer = inputResponse(ctx.mcpReq.inputResponses, CONFIRM_KEY);
      if (answer.kind !== 'elicit' || answer.action !== 'accept' || answer.content?.[CONFIRM_KEY] !== true)
        return {
          content: [{ type: 'text', text: 'The user did not approve the run; nothing ran.' }],
          structuredContent: {
            status: 'declined',
            origin: toolOrigin(prepared.served),
            preview: { willRun: prepared.willRun },
          },
        };
      return execute(runner, prepared, { token: state, caller }, ctx.mcpReq.signal);
    }
    if (input.confirmToken !== undefined && (settings.confirm !== 'refuse' || canElicit(mcp, ctx)))
      return execute(runner, prepared, { token: input.confirmToken, caller }, ctx.mcpReq.signal);
    if (settings.elicitation && canElicit(mcp, ctx))
      return inputRequired({
        inputRequests: {
          [CONFIRM_KEY]: inputRequired.elicit({
            message: `Run this script?\n${renderWillRun(prepared.willRun)}`,
            requestedSchema: confirmSchema,
          }),
        },
        requestState: runner.issue(prepared, caller).token,
      });
    if (settings.confirm === 'refuse')
      return refused(
        {
          code: 'run-confirmation-unavailable',
          detail:
            'this server runs scripts only for hosts that can ask their user (elicitation); runs.confirm is refuse',
        },
        prepared,
      );
    const { token, expiresAt } = runner.issue(prepared, caller);
    const expires = new Date(expiresAt).toISOString();
    return {
      content: [
        { type: 'text', text: renderConfirmation(prepared.willRun, token, expires, settings.confirm) },
      ],
      structuredContent: {
        status: 'confirmation-required',
        origin: toolOrigin(prepared.served),
        preview: { willRun: prepared.willRun },
        confirmToken: token,
        expiresAt: expires,
      },
    };
  });
}
