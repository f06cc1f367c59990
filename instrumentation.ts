// Runs once per `next start`, before the first request (not during `next build`).
export async function register() {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  // Node-only code is imported here, inside the runtime check, so the edge bundle never sees it.
  const { refuseUnrepresentableMethods } = await import('./lib/api/unrepresentable-methods');
  refuseUnrepresentableMethods();
  const { boot } = await import('./lib/boot');
  await boot();
}
