// Business hours (/v1/business-hours, one per workspace): on or off, the time zone, the weekly
// schedule (up to three opening ranges a day, on the quarter hour, 24:00 ending the day) and
// holidays (whole local days closed). Saved as a whole (PUT). SLA policies set to count business
// hours use it while it is on. Members read it; admins change it.
import { type FormEvent, useEffect, useId, useMemo, useState } from 'react';
import type { paths } from '../../api.gen';
import { useBusinessHours, useSaveBusinessHours } from '../../data/business-hours';
import { useWorkspace } from '../../lib/context';
import { ApiError } from '../../lib/errors';
import { useIsAdmin } from '../../lib/role';
import { CheckboxField, SelectField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import type { SectionProps } from './section';

type Hours = paths['/v1/business-hours']['get']['responses'][200]['content']['application/json'];
type DayKey = keyof Hours['schedule'];
type Range = Hours['schedule'][DayKey][number];
type Holiday = Hours['holidays'][number];

const DAYS: Array<[DayKey, string]> = [
  ['mon', 'Monday'],
  ['tue', 'Tuesday'],
  ['wed', 'Wednesday'],
  ['thu', 'Thursday'],
  ['fri', 'Friday'],
  ['sat', 'Saturday'],
  ['sun', 'Sunday'],
];
const MAX_RANGES = 3;
const MAX_HOLIDAYS = 100;
/** Every quarter hour of a day, 00:00 to 24:00. */
const TIMES: Array<[string, string]> = Array.from({ length: 97 }, (_, i) => {
  const t = `${String(Math.floor(i / 4)).padStart(2, '0')}:${String((i % 4) * 15).padStart(2, '0')}`;
  return [t, t === '24:00' ? '24:00 (end of day)' : t];
});

interface HolidayDraft extends Holiday {
  row: number;
}
let rows = 0;

export default function BusinessHours(_: SectionProps) {
  const ws = useWorkspace();
  const admin = useIsAdmin();
  const hours = useBusinessHours(ws);
  return (
    <div className="config">
      <PageTitle>Business hours</PageTitle>
      <p className="hint">
        When the team works. SLA policies set to count business hours only count these hours, and not holidays.
      </p>
      {!admin && <ReadOnlyNote>Only admins can change business hours.</ReadOnlyNote>}
      <ErrorNote error={hours.error} what="Could not load the business hours" />
      {hours.isPending ? <Loading /> : hours.data ? <HoursForm initial={hours.data} admin={admin} /> : null}
    </div>
  );
}

function HoursForm({ initial, admin }: { initial: Hours; admin: boolean }) {
  const saveHours = useSaveBusinessHours(useWorkspace());
  const [enabled, setEnabled] = useState(initial.enabled);
  const [timezone, setTimezone] = useState(initial.timezone);
  const [schedule, setSchedule] = useState<Hours['schedule']>(initial.schedule);
  const [holidays, setHolidays] = useState<HolidayDraft[]>(() => initial.holidays.map((h) => ({ ...h, row: rows++ })));
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const zones = useMemo(() => {
    const list = (Intl as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
    return list.includes(timezone) ? list : [timezone, ...list];
  }, [timezone]);
  useEffect(() => {
    if (Object.keys(problems).length) document.querySelector<HTMLElement>('.config [aria-invalid="true"]')?.focus();
  }, [problems]);

  const setDay = (d: DayKey, ranges: Range[]) => {
    setSaved(false);
    setSchedule((s) => ({ ...s, [d]: ranges }));
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    setError(null);
    const found = localProblems(schedule, holidays);
    setProblems(found);
    if (Object.keys(found).length) return;
    setBusy(true);
    try {
      const body = {
        enabled,
        timezone,
        schedule,
        holidays: holidays.map(({ date, name }) => ({ date, name: name.trim() })),
      };
      await saveHours.mutateAsync(body);
      setSaved(true);
    } catch (x) {
      setError(x);
      setProblems(apiProblems(x));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} noValidate>
      <fieldset disabled={!admin} className="plain">
        <CheckboxField
          label="Use business hours"
          hint="Off: SLA policies count every minute, even those set to count business hours."
          checked={enabled}
          onChange={(e) => {
            setSaved(false);
            setEnabled(e.target.checked);
          }}
        />
        <SelectField
          label="Time zone"
          value={timezone}
          onChange={(e) => {
            setSaved(false);
            setTimezone(e.target.value);
          }}
          options={zones.map((z): [string, string] => [z, z.replace(/_/g, ' ')])}
          error={problems.timezone}
        />
        <section className="config-section" aria-labelledby="week-heading">
          <h2 id="week-heading">Weekly schedule</h2>
          <div className="table-scroll">
            <table className="schedule">
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">Open</th>
                </tr>
              </thead>
              <tbody>
                {DAYS.map(([d, day]) => (
                  <DayRow
                    key={d}
                    day={day}
                    ranges={schedule[d]}
                    onChange={(r) => setDay(d, r)}
                    problem={problems[`schedule.${d}`]}
                    onCopy={
                      d === 'mon'
                        ? () => {
                            setSaved(false);
                            setSchedule((s) => ({ ...s, tue: s.mon, wed: s.mon, thu: s.mon, fri: s.mon }));
                          }
                        : undefined
                    }
                  />
                ))}
              </tbody>
            </table>
          </div>
        </section>
        <section className="config-section" aria-labelledby="holidays-heading">
          <h2 id="holidays-heading">Holidays</h2>
          <p className="hint">Whole days closed, in the time zone above.</p>
          {holidays.length === 0 && <p className="empty">No holidays.</p>}
          {holidays.map((h, i) => (
            <HolidayRow
              key={h.row}
              n={i + 1}
              holiday={h}
              problem={problems[`holidays.${i}`]}
              onChange={(next) => {
                setSaved(false);
                setHolidays((l) => l.map((x) => (x.row === h.row ? { ...next, row: h.row } : x)));
              }}
              onRemove={() => {
                setSaved(false);
                setHolidays((l) => l.filter((x) => x.row !== h.row));
              }}
            />
          ))}
          {holidays.length < MAX_HOLIDAYS && (
            <button
              type="button"
              className="button"
              onClick={() => setHolidays((l) => [...l, { date: '', name: '', row: rows++ }])}
            >
              Add a holiday
            </button>
          )}
        </section>
        {admin && (
          <>
            {error && !Object.keys(problems).length ? <ErrorNote error={error} what="Could not save" /> : null}
            {Object.keys(problems).length > 0 && (
              <p className="error" role="alert">
                Some hours need attention: see the messages next to them.
              </p>
            )}
            <div className="config-toolbar">
              <button type="submit" className="primary" disabled={busy}>
                Save business hours
              </button>
              <span role="status" className="hint">
                {saved ? 'Saved.' : ''}
              </span>
            </div>
          </>
        )}
      </fieldset>
    </form>
  );
}

function DayRow({
  day,
  ranges,
  onChange,
  problem,
  onCopy,
}: {
  day: string;
  ranges: Range[];
  onChange(r: Range[]): void;
  problem?: string;
  onCopy?: () => void;
}) {
  const id = useId();
  const open = ranges.length > 0;
  const setRange = (i: number, r: Range) => onChange(ranges.map((x, j) => (j === i ? r : x)));
  return (
    <tr>
      <th scope="row">
        <label className="switch-line">
          <input
            type="checkbox"
            checked={open}
            onChange={(e) => onChange(e.target.checked ? [{ start: '09:00', end: '17:00' }] : [])}
          />
          {day}
        </label>
      </th>
      <td>
        {!open ? (
          <span className="hint">Closed</span>
        ) : (
          <div className="ranges" aria-describedby={problem ? `${id}-error` : undefined}>
            {ranges.map((r, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a range is its place in the day
              <div key={i} className="range">
                <TimeSelect
                  label="From"
                  context={`${day}${ranges.length > 1 ? `, hours ${i + 1}` : ''}`}
                  value={r.start}
                  invalid={Boolean(problem)}
                  onChange={(start) => setRange(i, { ...r, start })}
                />
                <TimeSelect
                  label="to"
                  context={`${day}${ranges.length > 1 ? `, hours ${i + 1}` : ''}`}
                  value={r.end}
                  invalid={Boolean(problem)}
                  onChange={(end) => setRange(i, { ...r, end })}
                />
                {ranges.length > 1 && (
                  <button
                    type="button"
                    className="button"
                    aria-label={`Remove ${day} hours ${i + 1}`}
                    onClick={() => onChange(ranges.filter((_, j) => j !== i))}
                  >
                    Remove
                  </button>
                )}
              </div>
            ))}
            <div className="range">
              {ranges.length < MAX_RANGES && (
                <button
                  type="button"
                  className="button"
                  onClick={() => {
                    const last = ranges[ranges.length - 1]?.end ?? '09:00';
                    const start = last === '24:00' ? '23:00' : last;
                    onChange([...ranges, { start, end: '24:00' }]);
                  }}
                >
                  Add hours<span className="visually-hidden"> on {day}</span>
                </button>
              )}
              {onCopy && (
                <button type="button" className="button" onClick={onCopy}>
                  Copy to Tuesday–Friday
                </button>
              )}
            </div>
            {problem && (
              <p id={`${id}-error`} className="field-error">
                {problem}
              </p>
            )}
          </div>
        )}
      </td>
    </tr>
  );
}

function TimeSelect({
  label,
  context,
  value,
  invalid,
  onChange,
}: {
  label: string;
  context: string;
  value: string;
  invalid: boolean;
  onChange(v: string): void;
}) {
  const id = useId();
  const options = TIMES.some(([t]) => t === value) ? TIMES : [[value, value] as [string, string], ...TIMES];
  return (
    <>
      <label htmlFor={id}>
        {label}
        <span className="visually-hidden"> ({context})</span>
      </label>
      <select id={id} value={value} aria-invalid={invalid || undefined} onChange={(e) => onChange(e.target.value)}>
        {options.map(([t, text]) => (
          <option key={t} value={t}>
            {text}
          </option>
        ))}
      </select>
    </>
  );
}

function HolidayRow({
  n,
  holiday,
  problem,
  onChange,
  onRemove,
}: {
  n: number;
  holiday: Holiday;
  problem?: string;
  onChange(h: Holiday): void;
  onRemove(): void;
}) {
  const id = useId();
  const describedBy = problem ? `${id}-error` : undefined;
  return (
    <div className="holiday">
      <div className="inline-fields">
        <div className="field">
          <label htmlFor={`${id}-date`}>Holiday {n}: date</label>
          <input
            id={`${id}-date`}
            type="date"
            value={holiday.date}
            aria-invalid={problem && !holiday.date ? true : undefined}
            aria-describedby={describedBy}
            onChange={(e) => onChange({ ...holiday, date: e.target.value })}
          />
        </div>
        <div className="field">
          <label htmlFor={`${id}-name`}>Holiday {n}: name</label>
          <input
            id={`${id}-name`}
            value={holiday.name}
            maxLength={100}
            aria-invalid={problem && !holiday.name.trim() ? true : undefined}
            aria-describedby={describedBy}
            onChange={(e) => onChange({ ...holiday, name: e.target.value })}
          />
        </div>
        <button type="button" className="button" aria-label={`Remove holiday ${n}`} onClick={onRemove}>
          Remove
        </button>
      </div>
      {problem && (
        <p id={`${id}-error`} className="field-error">
          {problem}
        </p>
      )}
    </div>
  );
}

/** What the API would refuse, found before sending: ranges backwards or overlapping, holidays incomplete or twice. */
function localProblems(schedule: Hours['schedule'], holidays: Holiday[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [d] of DAYS) {
    const ranges = [...schedule[d]].sort((a, b) => a.start.localeCompare(b.start));
    if (ranges.some((r) => r.start >= r.end)) out[`schedule.${d}`] = 'Each range must end after it starts.';
    else if (ranges.some((r, i) => i > 0 && r.start < ranges[i - 1]!.end))
      out[`schedule.${d}`] = 'The ranges of a day must not overlap.';
  }
  const seen = new Set<string>();
  holidays.forEach((h, i) => {
    if (!h.date || !h.name.trim()) out[`holidays.${i}`] = 'Give the holiday a date and a name.';
    else if (seen.has(h.date)) out[`holidays.${i}`] = 'Another holiday has this date.';
    seen.add(h.date);
  });
  return out;
}

/** The API's field errors, keyed like localProblems (body.schedule.mon.0.end → schedule.mon). */
function apiProblems(err: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!(err instanceof ApiError)) return out;
  for (const f of err.fields) {
    const m = /^body\.(schedule\.[a-z]{3}|holidays\.\d+|timezone)/.exec(f.location);
    if (m && !out[m[1]!]) out[m[1]!] = f.message;
  }
  return out;
}
