export * from './build.ts';
export * from './store.ts';
export * from './types.ts';
