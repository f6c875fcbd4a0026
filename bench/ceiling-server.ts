// Ceiling C: what Express 5 + helmet + a bearer check + zod cost with no storage and no logs.
// The service is measured against it in the same run (bench/run.ts); it stores nothing and is never deployed.
import express from 'express';
import { z } from 'zod';
import { ceilingApp, listen } from './ceiling-app';

const newPlant = z.object({ id: z.number().int(), name: z.string().min(1).max(200), tag: z.string().min(1).max(100).optional() });

const app = ceilingApp();
app.use(express.json({ limit: '16kb' }));
app.post('/plants', (req, res) => {
  const parsed = newPlant.safeParse(req.body);
  if (!parsed.success) {
    res.status(400).json({ error: 40006, message: parsed.error.message });
    return;
  }
  res.json(parsed.data.tag === undefined ? { name: parsed.data.name } : { name: parsed.data.name, tag: parsed.data.tag });
});

listen(app);
