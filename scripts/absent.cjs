// Bundled in place of pino's parts that skillpin never uses (scripts/build.ts): sonic-boom, behind
// pino.destination(), and thread-stream, behind pino.transport(). Logs go through shared/logger.ts's own
// destination. Reaching one of them is a bug in this build, and says so.
module.exports = function absent() {
  throw new Error(
    'skillpin bundles neither pino.destination() nor pino.transport(): log through shared/logger.ts',
  );
};
