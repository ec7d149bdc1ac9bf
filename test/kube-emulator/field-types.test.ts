// Wrongly-typed fields are 400 BadRequest as the apiserver's decoder words them
// (apiserver/pkg/endpoints/handlers/rest.go transformDecodeError around sigs.k8s.io/json's
// UnmarshalTypeError: `json: cannot unmarshal <value> into Go struct field <Struct>.<path> of type
// <type>`, the path without indices, the first error in document order), and nothing is stored.
import { describe, expect, it } from 'vitest';
import { startHarness } from './harness.ts';

async function post(url: string, path: string, body: unknown) {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const deployment = (spec: Record<string, unknown>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'main', image: 'nginx' }] },
    },
    ...spec,
  },
});

const message = (detail: string) =>
  `Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal ${detail}`;

describe('wrongly-typed fields', () => {
  it("answer 400 with the decoder's words and store nothing", async () => {
    const harness = await startHarness({ kubelet: false });
    const { url } = harness.emulator;
    const path = '/apis/apps/v1/namespaces/default/deployments';
    const cases: [Record<string, unknown>, string][] = [
      [
        { replicas: 'two' },
        'string into Go struct field DeploymentSpec.spec.replicas of type int32',
      ],
      [
        { replicas: 1.5 },
        'number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32',
      ],
      [
        { replicas: 3000000000 },
        'number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32',
      ],
      [{ paused: 'yes' }, 'string into Go struct field DeploymentSpec.spec.paused of type bool'],
      [
        { selector: 'app=web' },
        'string into Go struct field DeploymentSpec.spec.selector of type v1.LabelSelector',
      ],
      [
        {
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              containers: [{ name: 'main', image: 'nginx', ports: [{ containerPort: '80' }] }],
            },
          },
        },
        'string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32',
      ],
      [
        { template: { metadata: { labels: { app: 7 } }, spec: { containers: {} } } },
        'number into Go struct field ObjectMeta.spec.template.metadata.labels of type string',
      ],
      [
        { template: { metadata: { labels: { app: 'web' } }, spec: { containers: {} } } },
        'object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container',
      ],
      [
        { strategy: { rollingUpdate: { maxSurge: true } } },
        'bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32',
      ],
    ];
    for (const [spec, detail] of cases) {
      const answer = await post(url, path, deployment(spec));
      expect(answer.status, detail).toBe(400);
      expect(answer.body).toMatchObject({
        kind: 'Status',
        reason: 'BadRequest',
        code: 400,
        message: message(detail),
      });
    }
    const top = await post(url, '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: 'x',
    });
    expect(top.body.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta',
    );
    // kubectl sends the body as written and prints the apiserver's message.
    const applied = await harness.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify(deployment({ replicas: 'two' })),
    });
    expect(applied.stderr).toContain(
      `Error from server (BadRequest): error when creating "STDIN": ${message('string into Go struct field DeploymentSpec.spec.replicas of type int32')}`,
    );
    // Nothing was stored; a well-typed body (null decodes into anything, an int-or-string string) passes.
    expect((await fetch(`${url}${path}/web`)).status).toBe(404);
    const ok = await post(
      url,
      path,
      deployment({ replicas: null, strategy: { rollingUpdate: { maxSurge: '25%' } } }),
    );
    expect(ok.status).toBe(201);
  });
});
