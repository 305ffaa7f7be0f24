/** The sandbox console in the browser (console/src), served at /console. */
export { registerConsoleRoutes, consolePath } from './console.routes.js';
