export * from './load.ts';
export * from './schema.ts';
