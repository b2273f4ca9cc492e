// Reports (/reports): the overview of GET /v1/reports/overview for a period: the totals, and
// charts (Recharts, in this chunk only) of the tickets created and solved per day, the daily
// medians of first response and resolution, and CSAT per day; each chart with a table of the same
// numbers (the charts themselves are hidden from assistive technology). Viewers are told up front
// that reports are for agents and above (the API answers them 403).
import { type ReactNode, useEffect, useId, useState } from 'react';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { type Overview, useReport } from '../../data/reports';
import { useWorkspace } from '../../lib/context';
import { useRole } from '../../lib/role';
import { Avatar } from '../../ui/avatar';
import { SelectField, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle } from '../../ui/page';
import { count } from '../../ui/words';
import './reports.css';

type Day = Overview['by_day'][number];

type Preset = '7' | '30' | '90' | '365' | 'custom';
const PRESETS: Array<[Preset, string]> = [
  ['7', 'Last 7 days'],
  ['30', 'Last 30 days'],
  ['90', 'Last 90 days'],
  ['365', 'Last 12 months'],
  ['custom', 'Custom dates'],
];

/** A local calendar date, YYYY-MM-DD, `days` before today. */
function dateBefore(days: number): string {
  const d = new Date();
  d.setDate(d.getDate() - days);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** Minutes as people read them: 25 min, 4.5 h, 11 d. */
export function duration(min: number | null | undefined): string {
  if (min === null || min === undefined) return '–';
  if (min < 60) return `${Math.round(min)} min`;
  if (min < 48 * 60) return `${(min / 60).toFixed(min < 600 ? 1 : 0)} h`;
  return `${(min / 1440).toFixed(1)} d`;
}

/**
 * A time axis in readable steps: the unit the largest value reads best in (minutes, hours or
 * days), ticks at whole numbers of it (1, 2, 5 times a power of ten apart), so no two ticks say
 * the same ("0 min, 0 min, 1 min" was Recharts' own ticks between 0 and 1.5 minutes, rounded).
 */
export function timeAxis(maxMinutes: number): { ticks: number[]; label(v: number): string } {
  const max = Number.isFinite(maxMinutes) && maxMinutes > 0 ? maxMinutes : 1;
  const [size, unit] = max >= 2 * 1440 ? [1440, 'd'] : max >= 120 ? [60, 'h'] : [1, 'min'];
  const top = max / size;
  const rough = top / 4;
  const power = 10 ** Math.floor(Math.log10(Math.max(rough, 1)));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power);
  const ticks: number[] = [];
  for (let v = 0; v < top + step; v += step) ticks.push(v * size);
  return { ticks, label: (v: number) => `${Math.round(v / size)} ${unit}` };
}

const dayLabel = (iso: string) =>
  new Date(`${iso}T12:00:00`).toLocaleDateString(undefined, { month: 'short', day: 'numeric' });

/** The theme's colours for the SVG (attributes cannot take CSS variables), following light/dark. */
function readColors() {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  return {
    a: v('--accent', '#1d4ed8'),
    b: v('--ok', '#067647'),
    c: v('--danger', '#b42318'),
    grid: v('--border', '#d5d9df'),
    text: v('--fg-soft', '#4f5863'),
    bg: v('--bg', '#ffffff'),
    fg: v('--fg', '#1b1f24'),
  };
}

function useColors() {
  const read = readColors;
  const [colors, setColors] = useState(read);
  useEffect(() => {
    const mq = matchMedia('(prefers-color-scheme: dark)');
    const on = () => setColors(readColors());
    mq.addEventListener('change', on);
    return () => mq.removeEventListener('change', on);
  }, []);
  return colors;
}

export function Reports() {
  const ws = useWorkspace();
  const role = useRole();
  const [preset, setPreset] = useState<Preset>('30');
  const [from, setFrom] = useState(dateBefore(29));
  const [to, setTo] = useState(dateBefore(0));
  const range =
    preset === 'custom'
      ? { from, to: nextDay(to) }
      : { from: dateBefore(Number(preset) - 1), to: undefined as string | undefined };
  const allowed = role !== 'viewer';
  const q = useReport(ws, range, allowed && Boolean(range.from) && (preset !== 'custom' || Boolean(to)));
  return (
    <div className="screen reports">
      <PageTitle>Reports</PageTitle>
      {!allowed ? (
        <p className="hint">
          Reports are for agents, admins and owners (they show each agent's work). Ask an admin if you need them.
        </p>
      ) : (
        <>
          <form className="period" onSubmit={(e) => e.preventDefault()}>
            <SelectField
              label="Period"
              value={preset}
              onChange={(e) => setPreset(e.target.value as Preset)}
              options={PRESETS}
            />
            {preset === 'custom' && (
              <>
                <TextField label="From" type="date" value={from} max={to} onChange={(e) => setFrom(e.target.value)} />
                <TextField
                  label="To (included)"
                  type="date"
                  value={to}
                  min={from}
                  onChange={(e) => setTo(e.target.value)}
                />
              </>
            )}
          </form>
          {q.isPending ? (
            <Loading label="Loading the report…" />
          ) : q.error ? (
            <ErrorNote error={q.error} what="Could not load the report" />
          ) : (
            <Report r={q.data} busy={q.isFetching} />
          )}
        </>
      )}
    </div>
  );
}

function nextDay(iso: string): string {
  if (!iso) return iso;
  const d = new Date(`${iso}T12:00:00`);
  d.setDate(d.getDate() + 1);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

function Report({ r, busy }: { r: Overview; busy: boolean }) {
  const colors = useColors();
  const days = r.by_day.map((d) => ({ ...d, label: dayLabel(d.date) }));
  const times = timeAxis(
    Math.max(0, ...r.by_day.flatMap((d) => [d.first_response_p50_minutes ?? 0, d.resolution_p50_minutes ?? 0])),
  );
  const axis = { stroke: colors.text, fontSize: 12 };
  const tip = { contentStyle: { background: colors.bg, borderColor: colors.grid, color: colors.fg } };
  return (
    <div aria-busy={busy}>
      <p className="hint">
        {dayLabel(r.by_day[0]?.date ?? r.from.slice(0, 10))} to {dayLabel(r.by_day.at(-1)?.date ?? r.to.slice(0, 10))},
        in the time zone {r.timezone}.
      </p>
      <dl className="kpis">
        <Kpi label="Created" value={String(r.created)} />
        <Kpi label="Solved" value={String(r.solved)} />
        <Kpi label="Open now" value={String(r.open_now)} />
        <Kpi label="First response (median)" value={duration(r.first_response_p50_minutes)} />
        <Kpi label="Resolution (median)" value={duration(r.resolution_p50_minutes)} />
        <Kpi
          label="CSAT (average of 5)"
          value={r.csat_avg === null ? '–' : r.csat_avg.toFixed(2)}
          note={count(r.csat_count, 'rating')}
        />
        <Kpi label="SLA breached" value={String(r.sla_breached)} />
      </dl>

      <Chart
        title="Tickets created and solved"
        table={
          <DayTable
            days={days}
            columns={[
              ['Created', (d) => String(d.created)],
              ['Solved', (d) => String(d.solved)],
            ]}
          />
        }
      >
        <BarChart data={days} accessibilityLayer={false}>
          <CartesianGrid stroke={colors.grid} vertical={false} />
          <XAxis dataKey="label" {...axis} minTickGap={16} />
          <YAxis allowDecimals={false} {...axis} width={36} />
          <Tooltip {...tip} />
          <Legend />
          <Bar dataKey="created" name="Created" fill={colors.a} isAnimationActive={false} />
          <Bar dataKey="solved" name="Solved" fill={colors.b} isAnimationActive={false} />
        </BarChart>
      </Chart>

      <Chart
        title="First response and resolution times (daily medians)"
        table={
          <DayTable
            days={days}
            columns={[
              ['First response', (d) => duration(d.first_response_p50_minutes)],
              ['Resolution', (d) => duration(d.resolution_p50_minutes)],
            ]}
          />
        }
      >
        <LineChart data={days} accessibilityLayer={false}>
          <CartesianGrid stroke={colors.grid} vertical={false} />
          <XAxis dataKey="label" {...axis} minTickGap={16} />
          <YAxis
            {...axis}
            width={56}
            ticks={times.ticks}
            domain={[0, times.ticks.at(-1) ?? 'auto']}
            interval={0}
            tickFormatter={times.label}
          />
          <Tooltip {...tip} formatter={(v) => duration(Number(v))} />
          <Legend />
          <Line
            dataKey="first_response_p50_minutes"
            name="First response"
            stroke={colors.a}
            connectNulls
            isAnimationActive={false}
          />
          <Line
            dataKey="resolution_p50_minutes"
            name="Resolution"
            stroke={colors.c}
            connectNulls
            isAnimationActive={false}
          />
        </LineChart>
      </Chart>

      <Chart
        title="Customer satisfaction (average score per day, 1 to 5)"
        table={
          <DayTable
            days={days}
            columns={[
              ['Average score', (d) => (d.csat_avg === null ? '–' : d.csat_avg.toFixed(2))],
              ['Ratings', (d) => String(d.csat_count)],
            ]}
          />
        }
      >
        <BarChart data={days} accessibilityLayer={false}>
          <CartesianGrid stroke={colors.grid} vertical={false} />
          <XAxis dataKey="label" {...axis} minTickGap={16} />
          <YAxis domain={[0, 5]} ticks={[0, 1, 2, 3, 4, 5]} {...axis} width={28} />
          <Tooltip {...tip} />
          <Bar dataKey="csat_avg" name="Average score" fill={colors.b} isAnimationActive={false} />
        </BarChart>
      </Chart>

      <div className="breakdowns">
        <Breakdown
          title="By channel"
          rows={Object.entries(r.by_channel).map(([k, v]) => [CHANNEL[k] ?? k, String(v)])}
          head={['Channel', 'Created']}
        />
        <Breakdown
          title="By severity"
          rows={Object.entries(r.by_severity).map(([k, v]) => [k === 'none' ? 'None' : k.toUpperCase(), String(v)])}
          head={['Severity', 'Created']}
        />
      </div>

      <section className="report-block" aria-labelledby="by-agent">
        <h2 id="by-agent">By agent</h2>
        {r.by_agent.length === 0 ? (
          <p className="hint">No assigned tickets in this period.</p>
        ) : (
          <div className="table-scroll">
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Solved</th>
                  <th scope="col">First response (median)</th>
                </tr>
              </thead>
              <tbody>
                {r.by_agent.map((a) => (
                  <tr key={a.user.id}>
                    <th scope="row" className="agent">
                      <Avatar url={a.user.avatar_url} name={a.user.name} size={24} /> {a.user.name}
                    </th>
                    <td>{a.solved}</td>
                    <td>{duration(a.first_response_p50_minutes)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </div>
  );
}

const CHANNEL: Record<string, string> = { email: 'Email', chat: 'Chat', api: 'API', portal: 'Help center form' };

function Kpi({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <div className="kpi">
      <dt>{label}</dt>
      <dd>
        <span className="kpi-value">{value}</span>
        {note && <span className="hint">{note}</span>}
      </dd>
    </div>
  );
}

/** A chart with its title, and the same numbers as a table (shown on request) for screen readers and keyboards. */
function Chart({ title, children, table }: { title: string; children: ReactNode; table: ReactNode }) {
  const id = useId();
  return (
    <section className="report-block" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <div className="chart" aria-hidden="true">
        <ResponsiveContainer width="100%" height={240}>
          {children as never}
        </ResponsiveContainer>
      </div>
      <details>
        <summary>
          Show as a table<span className="visually-hidden">: {title}</span>
        </summary>
        {table}
      </details>
    </section>
  );
}

function DayTable({ days, columns }: { days: Day[]; columns: Array<[string, (d: Day) => string]> }) {
  return (
    <div className="table-scroll">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Day</th>
            {columns.map(([h]) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {days.map((d) => (
            <tr key={d.date}>
              <th scope="row">
                <time dateTime={d.date}>{dayLabel(d.date)}</time>
              </th>
              {columns.map(([h, f]) => (
                <td key={h}>{f(d)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Breakdown({ title, rows, head }: { title: string; rows: Array<[string, string]>; head: [string, string] }) {
  const id = useId();
  return (
    <section className="report-block" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <table className="table">
        <thead>
          <tr>
            <th scope="col">{head[0]}</th>
            <th scope="col">{head[1]}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
