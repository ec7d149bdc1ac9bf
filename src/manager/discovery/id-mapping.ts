// How a validator pod maps to the id of its key: StatefulSet ordinal + 1, a pattern on the pod
// name, or an annotation (docs/design.md §The rule that decides); the ids' format is the
// chain port's (`IdFormat`: Pocket V1's is three digits, chain/pocket/id-format.ts).
import { IdMapping, type Config } from '../config.ts';
import type { IdFormat, ValidatorId } from '../model.ts';

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

export function createIdMapper(
  config: Pick<Config, 'idMapping' | 'idPattern' | 'idAnnotation'>,
  ids: IdFormat,
): IdMapper {
  const { min, max } = ids.range;
  switch (config.idMapping) {
    case IdMapping.ordinal:
      return {
        derivableFromName: true,
        idOf: ({ name, ordinal }) => {
          const id = ordinal === undefined ? undefined : ids.fromNumber(ordinal + 1);
          return id === undefined
            ? { problem: `pod ${name} has no StatefulSet ordinal in ${min - 1}…${max - 1}` }
            : { id };
        },
      };
    case IdMapping.pattern:
      return {
        derivableFromName: true,
        idOf: ({ name }) => {
          const group = config.idPattern.exec(name)?.[1];
          const id =
            group !== undefined && /^\d+$/.test(group) ? ids.fromNumber(Number(group)) : undefined;
          return id === undefined
            ? {
                problem: `pod name ${name} does not match ${config.idPattern.source} with a number ${min}…${max}`,
              }
            : { id };
        },
      };
    case IdMapping.annotation:
      return {
        derivableFromName: false,
        idOf: ({ name, annotations }) => {
          const value = annotations?.[config.idAnnotation];
          const id = value === undefined ? undefined : ids.fromText(value);
          return id === undefined
            ? {
                problem: `pod ${name} has no valid ${config.idAnnotation} annotation (${min}…${max})`,
              }
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
