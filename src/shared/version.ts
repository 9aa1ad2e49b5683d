/** Who the server says it is (the MCP handshake, `--version`, OAuth metadata); a leaf, so `--version` loads nothing else. */
export const SERVER_NAME = 'skillpin';
export const SERVER_VERSION = '0.1.0';
