# syntax=docker/dockerfile:1.7
# The equivalent of examples/golden/spec.json for BuildKit: the same packages, unpacked
# the same way, one layer per spec layer. Its build context "golden" is the folder that
# examples/golden/fetch fills (examples/golden/cache):
#   examples/golden/fetch --trainer build/trainer/trainer
#   docker buildx build --build-context golden=examples/golden/cache \
#     -f dockerfiles/golden.Dockerfile -t golden .
# Differences from imgtool: no /var/lib/dpkg records (dpkg-query sees nothing), no
# dist-info RECORD check of each wheel file, and not bit-for-bit reproducible (see
# README.md).
# The unpack stage is pinned by digest (imgtool lint requires it). This digest was taken
# from public pins of debian:12 and not checked against the registry here (no network):
# re-pin before relying on it, with the digest of the image you trust:
#   skopeo inspect --format '{{.Digest}}' docker://docker.io/library/debian:12
#   docker buildx build --build-arg DEBIAN_12=debian:12@sha256:<that digest> ...
ARG DEBIAN_12=debian:12@sha256:8a8cd02c5912770b4980228a54d4aff9e4f986f1eb2525d2d371dec5232cefcc
FROM ${DEBIAN_12} AS unpack
COPY --from=golden debs/ /in/debs/
COPY --from=golden wheels/ /in/wheels/
COPY --from=golden bin/trainer /in/trainer
# The pins of spec.json: a changed input stops the build here.
RUN cd /in && sha256sum -c --strict <<'EOT'
ba4f88f73dbc3ae9055f3c20f4523bfdbaf1ad13ff95e258924f77d20b4fbedf  debs/libc6_2.36-9+deb12u14_amd64.deb
1896a2aacf4ad681ff5eacc24a5b0ca4d5d9c9b9c9e4b6de5197bc1e116ea619  debs/gcc-12-base_12.2.0-14+deb12u1_amd64.deb
3016e62cb4b7cd8038822870601f5ed131befe942774d0f745622cc77d8a88f7  debs/libgcc-s1_12.2.0-14+deb12u1_amd64.deb
5cd3171216d4ab0fc911cfe9c35509bf2dd8f47761c43b7f6a4296701551a24d  debs/libstdc++6_12.2.0-14+deb12u1_amd64.deb
d7dd1d1411fedf27f5e27650a6eff20ef294077b568f4c8c5e51466dc7c08ce4  debs/zlib1g_1%3a1.2.13.dfsg-1_amd64.deb
cb4784740daa9b3b0eaea2b444bbefa686794afbbf3d678d238c1fd9875f2efd  debs/libssl3_3.0.22-1~deb12u2_amd64.deb
9b59cb82b2a5c48aaf2e27913ce7fc1f1d13ed1154a62748dc8eca78b2bf1f68  debs/libgloo0_0.0~git20220518.5b14351-3_amd64.deb
61f25d841052ad6cd6adfa9fad050345ea1047abc6ea79f931ab1a9ed55af3ae  debs/libhiredis0.14_0.14.1-3_amd64.deb
35054815259fee46173240254246d03b673a5cd5c528aaac96fd15ac428a8d59  debs/libibverbs1_44.0-2_amd64.deb
d1fc3e9eb8e79b4c96b0a64c3d8c9e068ae2f665cab71bd19f417ffd0453a890  debs/libnl-3-200_3.7.0-0.2+b1_amd64.deb
0fdcc425ae2982788c085c76a7cb0eda3e3db99d41bd1ce56082ee18e9f1e21f  debs/libnl-route-3-200_3.7.0-0.2+b1_amd64.deb
7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548  wheels/nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
ee8722c1f0145ab246bccb9e452153b5e0515fd094c3678df50b2a0888b8b171  wheels/nvidia_cublas-13.1.0.3-py3-none-manylinux_2_27_x86_64.whl
d20e1734305e9d68889a96e3f35094d733ff1f83932ebe462753973e53a572bf  wheels/nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_x86_64.whl
e4553a30f34195f3fa1da02a6da3d6337d28f2003943aa0a3d247bbc25fefc42  wheels/nvidia_nccl_cu13-2.28.9-py3-none-manylinux_2_18_x86_64.whl
39e172fe32dd318ebb3e512220c3beea2fa47d7e20bab348fb4e0922d6beefc0  debs/dataset-fashion-mnist_0.0~git20200523.55506a9-1_all.deb
EOT
RUN set -e; unpack() { out=$1; shift; mkdir -p "$out"; for d in "$@"; do dpkg-deb -x "/in/$d" "$out"; done; }; \
    unpack /l/debian-runtime debs/libc6_2.36-9+deb12u14_amd64.deb debs/gcc-12-base_12.2.0-14+deb12u1_amd64.deb debs/libgcc-s1_12.2.0-14+deb12u1_amd64.deb debs/libstdc++6_12.2.0-14+deb12u1_amd64.deb debs/zlib1g_1%3a1.2.13.dfsg-1_amd64.deb debs/libssl3_3.0.22-1~deb12u2_amd64.deb; \
    unpack /l/gloo debs/libgloo0_0.0~git20220518.5b14351-3_amd64.deb debs/libhiredis0.14_0.14.1-3_amd64.deb debs/libibverbs1_44.0-2_amd64.deb debs/libnl-3-200_3.7.0-0.2+b1_amd64.deb debs/libnl-route-3-200_3.7.0-0.2+b1_amd64.deb; \
    unpack /l/fashion-mnist debs/dataset-fashion-mnist_0.0~git20200523.55506a9-1_all.deb
RUN set -e; for w in cuda-runtime:wheels/nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl cublas:wheels/nvidia_cublas-13.1.0.3-py3-none-manylinux_2_27_x86_64.whl \
      cudnn:wheels/nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_x86_64.whl nccl:wheels/nvidia_nccl_cu13-2.28.9-py3-none-manylinux_2_18_x86_64.whl; do \
      mkdir -p "/l/${w%%:*}/usr/local/cuda" && python3 -m zipfile -e "/in/${w#*:}" "/l/${w%%:*}/usr/local/cuda"; \
    done

FROM scratch
COPY --from=unpack --link /l/debian-runtime/ /
COPY --from=unpack --link /l/gloo/ /
COPY --from=unpack --link /l/cuda-runtime/ /
COPY --from=unpack --link /l/cublas/ /
COPY --from=unpack --link /l/cudnn/ /
COPY --from=unpack --link /l/nccl/ /
COPY --from=unpack --link /l/fashion-mnist/ /
COPY --from=unpack --link --chmod=0755 /in/trainer /usr/local/bin/trainer
COPY --link <<EOT /etc/passwd
root:x:0:0:root:/root:/sbin/nologin
trainer:x:10001:10001::/home/trainer:/sbin/nologin
EOT
COPY --link <<EOT /etc/group
root:x:0:
trainer:x:10001:
EOT
COPY --link <<EOT /etc/imgtool/stack.json
{"components":{"cublas":{"version":"13.1.0.3"},"cuda":{"version":"13.0.96"},"cudnn":{"version":"9.19.0"},"nccl":{"version":"2.28.9"}},"schemaVersion":1}
EOT
ENV LD_LIBRARY_PATH=/usr/local/cuda/nvidia/cu13/lib:/usr/local/cuda/nvidia/cudnn/lib:/usr/local/cuda/nvidia/nccl/lib:/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu:/usr/lib \
    PATH=/usr/local/bin:/usr/bin:/bin
LABEL org.imgtool.stack.cuda=13.0.96 org.imgtool.stack.cublas=13.1.0.3 \
      org.imgtool.stack.cudnn=9.19.0 org.imgtool.stack.nccl=2.28.9 \
      org.opencontainers.image.title="imgtool golden trainer image" \
      org.opencontainers.image.source=examples/golden
USER 10001:10001
WORKDIR /home/trainer
ENTRYPOINT ["/usr/local/bin/trainer"]
