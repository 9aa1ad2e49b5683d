declare module 'proxy-from-env' {
  /** The proxy URL for `url` from the *_PROXY variables, or '' when none applies (NO_PROXY). */
  export function getProxyForUrl(url: string): string;
}
