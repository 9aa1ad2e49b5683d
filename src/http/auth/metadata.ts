import {
  getOAuthProtectedResourceMetadataUrl,
  type OAuthProtectedResourceMetadata,
} from '@modelcontextprotocol/server';
import type { AuthConfig } from '../../config/index.ts';
import { SERVER_NAME } from '../../shared/version.ts';

/** RFC 9728 §3: the well-known path of protected resource metadata. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** This server as an OAuth protected resource: its identifier and where its metadata document is. */
export interface ProtectedResource {
  /** Paths the document is served at: the root form and RFC 9728's path-aware form for the MCP path. */
  readonly paths: readonly string[];
  /** Where the document is, for `WWW-Authenticate: Bearer resource_metadata=…`. */
  metadataUrl(request: Request): string;
  document(request: Request): OAuthProtectedResourceMetadata;
}

/**
 * With `oauth`, the resource is the configured audience (the URL clients reach this server at, behind any proxy)
 * and the document names the issuer and the scopes that see sources. With static tokens only, it is the URL
 * the request came to.
 */
export function protectedResource(auth: AuthConfig, mcpPath: string): ProtectedResource {
  const { oauth } = auth;
  const resourceOf = (request: Request) =>
    oauth === undefined ? new URL(mcpPath, request.url) : new URL(oauth.audience);
  const pathAware =
    oauth === undefined
      ? `${PROTECTED_RESOURCE_PATH}${mcpPath}`
      : new URL(getOAuthProtectedResourceMetadataUrl(new URL(oauth.audience))).pathname;
  return {
    paths: [...new Set([PROTECTED_RESOURCE_PATH, pathAware])],
    metadataUrl: (request) => getOAuthProtectedResourceMetadataUrl(resourceOf(request)),
    document: (request) => ({
      resource: oauth === undefined ? resourceOf(request).href : oauth.audience,
      // RFC 9728's document: with static tokens only there is no authorization server, and the fields are absent.
      ...(oauth === undefined
        ? {}
        : { authorization_servers: [oauth.issuer], scopes_supported: Object.keys(oauth.scopes) }),
      bearer_methods_supported: ['header'],
      resource_name: SERVER_NAME,
    }),
  };
}
