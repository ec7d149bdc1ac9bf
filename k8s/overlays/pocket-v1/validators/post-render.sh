#!/bin/sh
# Helm post-renderer: reads the rendered chart on stdin, adds the departure hook to its
# validator StatefulSets (departure-patch.yaml), writes the result on stdout.
#   helm upgrade --install validator-001-pocket charts/pocket … \
#     --post-renderer k8s/overlays/pocket-v1/validators/post-render.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/all.yaml"
cp "$here/departure-patch.yaml" "$work/"
cat > "$work/kustomization.yaml" <<'KUSTOMIZATION'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [all.yaml]
patches:
  - path: departure-patch.yaml
    target:
      kind: StatefulSet
      name: validator-.*-pocket
KUSTOMIZATION
if command -v kustomize >/dev/null 2>&1; then kustomize build "$work"; else kubectl kustomize "$work"; fi
