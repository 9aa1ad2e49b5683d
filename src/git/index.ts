export * from './errors.ts';
export * from './refs.ts';
export * from './remote.ts';
export * from './repository.ts';
export * from './tree.ts';
export * from './http.ts';
