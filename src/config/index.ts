export * from './load.ts';
export * from './schema.ts';
export * from './shorthand.ts';
