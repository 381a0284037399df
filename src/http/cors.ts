/**
 * Headers a browser-based client (an assistant's, an inspector) sends to, and reads from, the MCP
 * endpoint and the OAuth endpoints it discovers from there: both transports' CORS policies name them.
 */
export const allowedHeaders = ['Authorization', 'Content-Type', 'Accept', 'Mcp-Protocol-Version', 'Mcp-Method', 'Mcp-Name'];
export const exposedHeaders = ['WWW-Authenticate', 'Mcp-Protocol-Version', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'X-Request-Id'];
