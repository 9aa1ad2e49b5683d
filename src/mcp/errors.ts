import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';

/** -32602 with the requested URI in `data.uri` (SEP-2164), and a message that names it. */
export function invalidParams(message: string, uri?: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message, uri === undefined ? undefined : { uri });
}

/** -32603 naming what failed, never how (no path, no stack: those go to the log). */
export function internalError(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InternalError, message);
}
