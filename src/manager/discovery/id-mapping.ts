// How a validator pod maps to the id of its key: StatefulSet ordinal + 1 (three digits), a
// pattern on the pod name, or an annotation. Configuration decides (DESIGN.md, "The rule").
import { IdMapping, type Config } from '../config.ts';
import type { ValidatorId } from '../model.ts';

export interface IdMapper {
  /** The id of a pod, or an explanation of why none can be derived. */
  idOf(pod: {
    name: string;
    ordinal: number | undefined;
    annotations: Readonly<Record<string, string>> | undefined;
  }): { id: ValidatorId } | { problem: string };
  /** True when the id of a pod that does not exist yet can be derived from its name. */
  readonly derivableFromName: boolean;
}

/** Formats a number as a V1 id ("5" → "005"); undefined outside 1…999. */
export function toValidatorId(value: number): ValidatorId | undefined {
  return Number.isInteger(value) && value >= 1 && value <= 999
    ? String(value).padStart(3, '0')
    : undefined;
}

export function createIdMapper(
  config: Pick<Config, 'idMapping' | 'idPattern' | 'idAnnotation'>,
): IdMapper {
  switch (config.idMapping) {
    case IdMapping.ordinal:
      return {
        derivableFromName: true,
        idOf: ({ name, ordinal }) => {
          const id = ordinal === undefined ? undefined : toValidatorId(ordinal + 1);
          return id === undefined
            ? { problem: `pod ${name} has no StatefulSet ordinal in 0…998` }
            : { id };
        },
      };
    case IdMapping.pattern:
      return {
        derivableFromName: true,
        idOf: ({ name }) => {
          const group = config.idPattern.exec(name)?.[1];
          const id =
            group !== undefined && /^\d+$/.test(group) ? toValidatorId(Number(group)) : undefined;
          return id === undefined
            ? {
                problem: `pod name ${name} does not match ${config.idPattern.source} with a number 1…999`,
              }
            : { id };
        },
      };
    case IdMapping.annotation:
      return {
        derivableFromName: false,
        idOf: ({ name, annotations }) => {
          const value = annotations?.[config.idAnnotation];
          const id =
            value !== undefined && /^\d{1,3}$/.test(value)
              ? toValidatorId(Number(value))
              : undefined;
          return id === undefined
            ? { problem: `pod ${name} has no valid ${config.idAnnotation} annotation (1…999)` }
            : { id };
        },
      };
  }
}

/** The ordinal of a StatefulSet pod from its name (`<sts>-<n>`). */
export function ordinalOf(podName: string, statefulSetName: string): number | undefined {
  const prefix = `${statefulSetName}-`;
  if (!podName.startsWith(prefix)) return undefined;
  const rest = podName.slice(prefix.length);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined;
}
