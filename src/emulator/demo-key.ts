/**
 * The bundled demo API key. PUBLIC on purpose: it exists only in the local emulator's bundled keys
 * file (config/emulator-keys.json holds its sha256), is printed at every emulator start, and grants
 * nothing anywhere else. Never use a `ffx_demo_b2b_` key against a real service.
 */
export const DEMO_API_KEY = 'ffx_demo_b2b_local0only0emulator0demo0key0000000001';
