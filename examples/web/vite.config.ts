import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// `npm run dev` proxies /api to a service on localhost:3000, as nginx does in the compose stack.
export default defineConfig({
  plugins: [react()],
  build: { target: 'es2022' },
  server: {
    proxy: {
      '/api': {
        target: 'http://localhost:3000',
        rewrite: (path) => path.replace(/^\/api/, ''),
        headers: { 'X-Forwarded-Prefix': '/api' },
      },
    },
  },
});
