"""CPU tests of convcat.torch (no GPU): the operators against torch.nn (their fallback path runs here),
fake implementations (torch.library.opcheck, torch.compile), modules and state dicts, convert() and
its fusions, report() and the query path ("on sm90a it runs ..."), pins, warnings.  Skipped where
torch is not installed.

    python3 -m unittest discover -s python/tests     or     python3 -m pytest python/tests
"""
import contextlib
import copy
import os
import unittest
import warnings

import _env

try:
    import torch
    from torch import nn
except ImportError:   # the whole module is skipped (unittest and pytest both honour this)
    raise unittest.SkipTest("torch is not installed")

import convcat
import convcat.torch as cct
from convcat.torch import _runtime as rt
from convcat.torch import ops
from convcat.torch.functional import padding_pairs

F = nn.functional


def setUpModule():
    cct.configure(library=_env.library_path() or "", catalog=_env.catalog_path() or "", pin=[], autotune=False,
                  enabled=True)


def close(a, b, tol=1e-5):
    return float((a - b).abs().max()) <= tol * max(1.0, float(b.abs().max()))


def has_catalog():
    return rt.catalog() is not None


class Ops(unittest.TestCase):
    def test_registered(self):
        for name in ("conv_forward", "conv_dgrad", "conv_wgrad"):
            self.assertTrue(hasattr(torch.ops.convcat, name))

    def test_opcheck(self):
        """Schema, fake tensors, autograd registration and AOT dispatch agree with the real kernels."""
        torch.manual_seed(0)
        cases = [
            # 2D, asymmetric padding, strides, bias and residual
            ((2, 8, 7, 9), (16, 8, 3, 3), [1, 2], [1, 1], [1, 2], [1, 1], 1, True, True),
            # 1D grouped, dilation, alpha
            ((2, 8, 11), (4, 4, 3), [2], [0], [1], [2], 2, False, False),
            # 3D
            ((1, 4, 5, 6, 7), (8, 4, 3, 1, 3), [1, 1, 2], [1, 0, 1], [1, 0, 1], [1, 1, 1], 1, True, False),
        ]
        for xs, ws, st, lo, hi, dil, g, has_b, has_r in cases:
            x = torch.randn(xs, requires_grad=True)
            w = torch.randn(ws, requires_grad=True)
            b = torch.randn(ws[0], requires_grad=True) if has_b else None
            geo = rt.geometry(len(xs) - 2, xs, ws, st, lo, hi, dil, g)
            r = torch.randn(geo.y_shape(), requires_grad=True) if has_r else None
            alpha = 1.0 if has_b else 0.5
            args = (x, w, b, r, st, lo, hi, dil, g, 0, alpha, 1.0 if has_r else 0.0, "opcheck")
            res = torch.library.opcheck(torch.ops.convcat.conv_forward.default, args)
            self.assertTrue(all(v == "SUCCESS" for v in res.values()), res)
            dy = torch.randn(geo.y_shape())
            common = (st, lo, hi, dil, g, "opcheck")
            res = torch.library.opcheck(torch.ops.convcat.conv_dgrad.default, (dy, w.detach(), list(xs)) + common)
            self.assertTrue(all(v == "SUCCESS" for v in res.values()), res)
            res = torch.library.opcheck(torch.ops.convcat.conv_wgrad.default, (dy, x.detach(), list(ws)) + common)
            self.assertTrue(all(v == "SUCCESS" for v in res.values()), res)

    def test_eager_path_matches_the_operator(self):
        """ops.forward outside torch.compile (an autograd Function over the passes' functions) gives the
        operator's output and all four gradients."""
        torch.manual_seed(2)
        xs, ws, st, lo, hi, dil, g = (2, 8, 7, 9), (16, 4, 3, 3), [1, 2], [1, 1], [1, 2], [1, 1], 2
        geo = rt.geometry(2, xs, ws, st, lo, hi, dil, g)
        leaves = [torch.randn(xs), torch.randn(ws), torch.randn(ws[0]), torch.randn(geo.y_shape())]
        dy = torch.randn(geo.y_shape())
        results = []
        for fn in (ops.forward, torch.ops.convcat.conv_forward):
            ins = [t.clone().requires_grad_() for t in leaves]
            y = fn(*ins, st, lo, hi, dil, g, 0, 0.5, 0.75, "eager")
            y.backward(dy)
            results.append([y.detach()] + [t.grad for t in ins])
        for a, b in zip(*results):
            self.assertTrue(close(a, b))

    def test_outputs_are_channel_innermost(self):
        y = torch.ops.convcat.conv_forward(torch.randn(2, 8, 5, 6), torch.randn(16, 8, 3, 3), None, None, [1, 1],
                                           [1, 1], [1, 1], [1, 1], 1, 0, 1.0, 0.0, "t")
        self.assertTrue(y.is_contiguous(memory_format=torch.channels_last))
        y = torch.ops.convcat.conv_forward(torch.randn(2, 8, 9), torch.randn(16, 8, 3), None, None, [1], [0], [0], [1],
                                           1, 0, 1.0, 0.0, "t")
        self.assertEqual(y.stride(), (7 * 16, 1, 16))

    def test_epilogue_matches_its_formula(self):
        torch.manual_seed(1)
        x, w, b = torch.randn(2, 8, 6, 6), torch.randn(16, 8, 3, 3), torch.randn(16)
        c = torch.randn(2, 16, 6, 6)
        for act, fn in (("none", lambda v: v), ("relu", torch.relu), ("gelu", F.gelu), ("silu", F.silu)):
            y = cct.conv(x, w, b, padding=1, residual=c, beta=0.75, alpha=0.5, activation=act)
            ref = fn(0.5 * F.conv2d(x, w, None, padding=1) + b.view(1, -1, 1, 1) + 0.75 * c)
            self.assertTrue(close(y, ref), act)

    def test_fused_activation_has_no_backward(self):
        x = torch.randn(1, 8, 4, 4, requires_grad=True)
        y = cct.conv(x, torch.randn(8, 8, 1, 1), activation="relu")
        with self.assertRaisesRegex(RuntimeError, "fused activation has no backward"):
            y.sum().backward()

    def test_filter_larger_than_input(self):
        with self.assertRaises(RuntimeError):
            cct.conv(torch.randn(1, 8, 2, 2), torch.randn(8, 8, 3, 3))

    def test_padding_pairs(self):
        self.assertEqual(padding_pairs("same", (4, 3), (1, 2), (1, 1), 2), ((1, 2), (2, 2)))
        self.assertEqual(padding_pairs("valid", (3,), (1,), (1,), 1), ((0,), (0,)))
        self.assertEqual(padding_pairs(((1, 2), (0, 3)), (3, 3), (1, 1), (1, 1), 2), ((1, 0), (2, 3)))
        self.assertEqual(padding_pairs((1, 2), (3, 3), (1, 1), (1, 1), 2), ((1, 2), (1, 2)))
        with self.assertRaises(ValueError):
            padding_pairs("same", (3,), (1,), (2,), 1)

    def test_residual_that_broadcasts_is_added_after(self):
        x, w = torch.randn(2, 8, 5, 5), torch.randn(8, 8, 3, 3)
        c = torch.randn(1, 8, 1, 1)
        y = cct.conv(x, w, padding=1, residual=c, activation="relu")
        self.assertTrue(close(y, torch.relu(F.conv2d(x, w, padding=1) + c)))


class Problems(unittest.TestCase):
    def test_axes_map_to_d_h_w(self):
        geo = rt.geometry(2, (4, 16, 10, 12), (32, 16, 3, 5), (1, 2), (1, 2), (1, 3), (1, 1), 1)
        p, text = rt.problem("fprop", geo, torch.bfloat16, False)
        q = convcat.make_problem(op="fprop", dims=2, n=4, h=10, w=12, c=16, k=32, r=3, s=5, pad_lo=(0, 1, 2),
                                 pad_hi=(0, 1, 3), stride=(1, 1, 2), dtype="bf16")
        self.assertEqual(convcat.problem_key(p), convcat.problem_key(q))
        self.assertEqual(text, convcat.problem_text(q))
        geo = rt.geometry(1, (4, 16, 10), (32, 8, 3), (2,), (1,), (1,), (2,), 2)
        p, _ = rt.problem("wgrad", geo, torch.float16, False)
        self.assertEqual((p.dims, p.d, p.h, p.w, p.t, p.r, p.s, p.groups), (1, 1, 1, 10, 1, 1, 3, 2))
        self.assertEqual((list(p.stride), list(p.dilation), list(p.pad_lo)), ([1, 1, 2], [1, 1, 2], [0, 0, 1]))
        geo = rt.geometry(3, (1, 8, 4, 5, 6), (8, 8, 2, 3, 3), (1, 1, 1), (0, 1, 1), (1, 1, 1), (1, 1, 1), 1)
        p, _ = rt.problem("dgrad", geo, torch.float32, True)
        self.assertEqual((p.d, p.h, p.w, p.t, p.r, p.s), (4, 5, 6, 2, 3, 3))
        self.assertEqual((p.a_type, p.b_type, p.out_type), (3, 3, 4))

    def test_dtypes(self):
        self.assertIsInstance(rt.dtype_types(torch.float32, False), str)
        self.assertIn("TF32 disallowed", rt.dtype_types(torch.float32, False))
        self.assertIn("float64", rt.dtype_types(torch.float64, True))
        self.assertEqual(rt.dtype_types(torch.float16, False), (1, 1, 1))

    def test_tf32_flag_follows_torch(self):
        old = torch.backends.cudnn.allow_tf32
        try:
            torch.backends.cudnn.allow_tf32 = False
            self.assertFalse(rt.tf32_allowed())
            torch.backends.cudnn.allow_tf32 = True
            self.assertTrue(rt.tf32_allowed())
        finally:
            torch.backends.cudnn.allow_tf32 = old


def _conv_cases():
    yield nn.Conv1d, dict(in_channels=8, out_channels=16, kernel_size=3, padding=1), (2, 8, 13)
    yield nn.Conv1d, dict(in_channels=8, out_channels=8, kernel_size=4, padding="same", groups=2, bias=False), (2, 8, 9)
    yield nn.Conv2d, dict(in_channels=8, out_channels=16, kernel_size=3, stride=2, padding=1), (2, 8, 9, 11)
    yield nn.Conv2d, dict(in_channels=8, out_channels=16, kernel_size=(2, 4), padding="same", dilation=(2, 1)), (2, 8, 7, 8)
    yield nn.Conv2d, dict(in_channels=6, out_channels=12, kernel_size=3, padding=2, padding_mode="reflect", groups=3), (1, 6, 8, 8)
    yield nn.Conv2d, dict(in_channels=4, out_channels=8, kernel_size=3, padding=1, padding_mode="circular", bias=False), (1, 4, 5, 6)
    yield nn.Conv2d, dict(in_channels=3, out_channels=8, kernel_size=7, stride=2, padding=3, bias=False), (2, 3, 16, 16)
    yield nn.Conv3d, dict(in_channels=4, out_channels=8, kernel_size=3, padding=(1, 0, 1), stride=(1, 2, 1)), (1, 4, 5, 6, 7)
    yield nn.Conv3d, dict(in_channels=4, out_channels=8, kernel_size=2, padding="same", padding_mode="replicate"), (1, 4, 4, 5, 3)


class Modules(unittest.TestCase):
    def test_forward_and_gradients_match_torch_nn(self):
        ours_of = {nn.Conv1d: cct.Conv1d, nn.Conv2d: cct.Conv2d, nn.Conv3d: cct.Conv3d}
        for cls, kw, shape in _conv_cases():
            with self.subTest(cls=cls.__name__, **{k: str(v) for k, v in kw.items()}):
                torch.manual_seed(0)
                ref = cls(**kw).double()
                ours = ours_of[cls](**kw).double()
                ours.load_state_dict(ref.state_dict())
                x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
                x2 = x.detach().clone().requires_grad_()
                g = torch.randn_like(ref(x))
                ref(x).backward(g)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", cct.ConvcatTorchWarning)
                    y = ours(x2)
                    y.backward(g)
                self.assertTrue(close(y, ref(x.detach())))
                self.assertTrue(close(x2.grad, x.grad))
                self.assertTrue(close(ours.weight.grad, ref.weight.grad))
                if ref.bias is not None:
                    self.assertTrue(close(ours.bias.grad, ref.bias.grad))

    def test_state_dicts_load_both_ways(self):
        for cls, kw, _ in _conv_cases():
            ours_cls = {nn.Conv1d: cct.Conv1d, nn.Conv2d: cct.Conv2d, nn.Conv3d: cct.Conv3d}[cls]
            ref, ours = cls(**kw), ours_cls(**kw)
            self.assertIsInstance(ours, cls)
            sd = ref.state_dict()
            self.assertEqual(ours.load_state_dict(sd, strict=True).missing_keys, [])
            self.assertEqual(list(ours.state_dict()), list(sd))
            for k in sd:
                self.assertEqual(ours.state_dict()[k].shape, sd[k].shape)
                self.assertTrue(torch.equal(ours.state_dict()[k], sd[k]))
            back = cls(**kw)
            back.load_state_dict(ours.state_dict(), strict=True)
            self.assertTrue(torch.equal(back.weight, ref.weight))

    def test_2d_filters_kept_channels_last(self):
        m = cct.Conv2d(8, 16, 3)
        self.assertTrue(m.weight.is_contiguous(memory_format=torch.channels_last))
        m.load_state_dict(nn.Conv2d(8, 16, 3).state_dict())
        self.assertTrue(m.weight.is_contiguous(memory_format=torch.channels_last))

    def test_layout_warnings_once_per_layer(self):
        m = cct.Conv2d(8, 8, 3, padding=1)
        x = torch.randn(2, 8, 6, 6)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            m(x)
            m(x)
            m(x.to(memory_format=torch.channels_last))
        copies = [w for w in got if issubclass(w.category, cct.ConvcatTorchWarning) and "not channel-innermost" in str(w.message)]
        self.assertEqual(len(copies), 1)
        m2 = cct.Conv2d(8, 8, 3, padding=1)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            m2(x.to(memory_format=torch.channels_last))
        self.assertEqual([w for w in got if "not channel-innermost" in str(w.message)], [])

    def test_1d_channels_last_is_read_without_copy(self):
        m = cct.Conv1d(8, 16, 3, padding=1)
        x = torch.randn(2, 13, 8).transpose(1, 2)   # (N, C, W) over (N, W, C) memory
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            y = m(x)
        self.assertEqual([w for w in got if "not channel-innermost" in str(w.message)], [])
        self.assertEqual(y.stride(), (13 * 16, 1, 16))
        self.assertTrue(close(y, F.conv1d(x, m.weight, m.bias, padding=1)))

    def test_autocast(self):
        m = cct.Conv2d(8, 16, 3, padding=1)
        ref = nn.Conv2d(8, 16, 3, padding=1)
        ref.load_state_dict(m.state_dict())
        x = torch.randn(2, 8, 6, 6).to(memory_format=torch.channels_last)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y, r = m(x), ref(x)
        self.assertEqual(y.dtype, torch.bfloat16)
        self.assertEqual(r.dtype, torch.bfloat16)
        self.assertTrue(close(y.float(), r.float(), 2e-2))

    def test_compile_traces_forward_and_backward(self):
        torch.manual_seed(0)
        m = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding="same", bias=False))
        cct.convert(m)
        x = torch.randn(2, 8, 9, 11).to(memory_format=torch.channels_last).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cct.ConvcatTorchWarning)
            y0 = m(x)
            y0.sum().backward()
            g0, x.grad = x.grad.clone(), None
            torch._dynamo.reset()
            cm = torch.compile(m, backend="aot_eager", fullgraph=True)
            y1 = cm(x)
            y1.sum().backward()
        self.assertTrue(close(y0, y1))
        self.assertTrue(close(g0, x.grad))


    def test_compile_with_autocast_inside(self):
        m = cct.convert(nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU()))

        def f(x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return m(x)

        x = torch.randn(2, 8, 6, 6).to(memory_format=torch.channels_last)
        torch._dynamo.reset()
        got = torch.compile(f, backend="aot_eager", fullgraph=True)(x)
        self.assertEqual(got.dtype, torch.bfloat16)
        self.assertTrue(close(got.float(), f(x).float()))


class Unavailable(unittest.TestCase):
    def test_missing_catalog_is_every_layers_reason(self):
        try:
            cct.configure(catalog="/nonexistent/convcat.catalog")
            m = cct.Conv2d(8, 8, 1)
            m(torch.randn(1, 8, 2, 2).to(memory_format=torch.channels_last))
            self.assertIn("convcat is not available", rt.records(m._convcat_tag)["fprop"].would)
            self.assertIn("/nonexistent/convcat.catalog", rt.catalog_error())
        finally:
            cct.configure(library=_env.library_path() or "", catalog=_env.catalog_path() or "")


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(8, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.down = nn.Sequential(nn.Conv2d(8, 16, 1, bias=False), nn.BatchNorm2d(16))
        self.conv3 = nn.Conv2d(16, 16, 1)
        self.act3 = nn.GELU()
        self.conv4 = nn.Conv2d(16, 8, 1)
        self.conv5 = nn.Conv2d(8, 8, 1)
        self.head = nn.ConvTranspose2d(8, 8, 2)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = self.relu(out + self.down(x))          # BN folded, residual and ReLU fused
        out = self.act3(self.conv3(out))             # exact GELU fused
        y = self.conv4(out)
        z = F.gelu(y, approximate="tanh")            # tanh GELU: not convcat's
        z = z + F.relu6(self.conv5(z))               # ReLU6: not fused; the add is not the conv's
        return self.head(z)


def _randomize_bn(model):
    g = torch.Generator().manual_seed(3)
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) - 0.5)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.bias.data.copy_(torch.rand(m.num_features, generator=g) - 0.5)


class Convert(unittest.TestCase):
    def test_in_place_keeps_objects_and_parameters(self):
        model = TinyResNet()
        params = {n: p for n, p in model.named_parameters()}
        conv1 = model.conv1
        sd = copy.deepcopy(model.state_dict())
        out = cct.convert(model)
        self.assertIs(out, model)   # training mode: in place, no fusion
        self.assertIs(model.conv1, conv1)
        self.assertIs(type(model.conv1), cct.Conv2d)
        self.assertIs(type(model.down[0]), cct.Conv2d)
        self.assertIsInstance(model.conv1, nn.Conv2d)
        self.assertIs(type(model.head), nn.ConvTranspose2d)
        for n, p in model.named_parameters():
            self.assertIs(p, params[n])
        for k, v in model.state_dict().items():
            self.assertTrue(torch.equal(v, sd[k]), k)
        self.assertIs(cct.convert(model), model)   # twice is fine

    def test_convert_a_bare_conv(self):
        m = nn.Conv3d(4, 8, 3)
        self.assertIs(cct.convert(m), m)
        self.assertIs(type(m), cct.Conv3d)

    def test_fusion_needs_eval(self):
        with self.assertRaisesRegex(ValueError, "model.eval"):
            cct.convert(TinyResNet(), fuse=True)

    def test_eval_fusion_is_exact_and_reported(self):
        torch.manual_seed(0)
        model = TinyResNet().eval()
        _randomize_bn(model)
        ref = copy.deepcopy(model)
        x = torch.randn(2, 8, 7, 7).to(memory_format=torch.channels_last)
        fused = cct.convert(model)
        self.assertIsNot(fused, model)
        self.assertIsInstance(fused, torch.fx.GraphModule)
        self.assertIsInstance(model.bn1, nn.BatchNorm2d)   # the original keeps its BatchNorm
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore", cct.ConvcatTorchWarning)
            want, got, orig = ref(x), fused(x), model(x)
        self.assertTrue(close(got, want, 1e-4))
        self.assertTrue(close(orig, want, 1e-5))
        self.assertIn("torch.fx graph: 3 BatchNorm folded, 3 activations and 1 residual adds fused into 4 convolutions",
                      fused._convcat_notes[0])
        mods = dict(fused.named_modules())
        self.assertEqual(mods["conv1"].fusion, {"bn": "bn1", "activation": "relu"})
        self.assertEqual(mods["conv2"].fusion, {"bn": "bn2", "residual": "add", "activation": "relu"})
        self.assertEqual(mods["conv3"].fusion, {"activation": "gelu"})
        self.assertEqual(mods["down.0"].fusion, {"bn": "down.1"})
        self.assertEqual(mods["conv4"].activation, "none")
        self.assertEqual(mods["conv5"].activation, "none")
        self.assertFalse(any(isinstance(m, nn.BatchNorm2d) for m in fused.modules()))
        rep = cct.report(fused)
        text = str(rep)
        self.assertIn("conv2: Conv2d 16->16 3x3, activation relu [bn2 folded, residual add fused, relu fused]", text)
        self.assertIn("head: ConvTranspose2d 8->8 2x2", text)
        self.assertIn("not converted: torch.nn.modules.conv.ConvTranspose2d", text)

    def test_untraceable_model_fuses_inside_sequential(self):
        class Branchy(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.SiLU(),
                                          nn.Conv2d(8, 8, 1), nn.ReLU6())

            def forward(self, x):
                if x.sum() > 0:   # data-dependent: torch.fx cannot trace it
                    return self.body(x)
                return self.body(-x)

        model = Branchy().eval()
        _randomize_bn(model)
        ref = copy.deepcopy(model)
        fused = cct.convert(model)
        self.assertIn("torch.fx could not trace the model", fused._convcat_notes[0])
        self.assertIn("1 BatchNorm folded, 1 activations", fused._convcat_notes[0])
        self.assertIsInstance(fused.body[1], nn.Identity)
        self.assertIsInstance(fused.body[4], nn.ReLU6)
        x = torch.randn(1, 8, 5, 5).to(memory_format=torch.channels_last)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore", cct.ConvcatTorchWarning)
            self.assertTrue(close(fused(x), ref(x), 1e-4))

    def test_torchvision_resnet_fuses_every_block(self):
        try:
            import torchvision
        except ImportError:
            self.skipTest("torchvision is not installed")
        model = torchvision.models.resnet18().eval()
        _randomize_bn(model)
        ref = copy.deepcopy(model)
        fused = cct.convert(model)
        self.assertIn("20 BatchNorm folded, 17 activations and 8 residual adds fused into 20 convolutions",
                      fused._convcat_notes[0])
        x = torch.randn(1, 3, 32, 32).to(memory_format=torch.channels_last)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore", cct.ConvcatTorchWarning)
            self.assertTrue(close(fused(x), ref(x), 1e-4))


class Report(unittest.TestCase):
    def setUp(self):
        if not has_catalog():
            self.skipTest(f"no catalog: {rt.catalog_error()}")

    def test_cpu_run_reports_what_sm90a_would_do(self):
        model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1))
        cct.convert(model)
        x = torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cct.ConvcatTorchWarning)
            model(x).sum().backward()
        rep = cct.report(model)
        self.assertEqual(len(rep), 2)
        first, second = rep
        self.assertEqual(first.ops["fprop"].ran, "torch (cpu)")
        self.assertIn("tensors on cpu", first.ops["fprop"].reason)
        self.assertTrue(first.fell_back)
        cat = rt.catalog()
        # The C = 3 stem: what the query says, a gather kernel where the catalog has one.
        for op in ("fprop", "dgrad", "wgrad"):
            p, _ = rt.problem(op, rt.geometry(2, (2, 3, 8, 8), (16, 3, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1),
                              torch.float32, True)
            q = cat.query(p, arch="sm90a")
            if q.runnable:
                self.assertEqual(first.ops[op].would, f"runs {q.runnable[0].key}")
                self.assertTrue(q.runnable[0].key.endswith("_gather"), q.runnable[0].key)
            else:
                self.assertIn("C = 3: channels must be a multiple of", first.ops[op].would)
        self.assertEqual(set(second.ops), {"fprop", "dgrad", "wgrad"})
        for op in ("fprop", "dgrad", "wgrad"):
            if any(e.op == op and e.dims == 2 and e.a_type == "tf32" for e in cat.entries):
                self.assertTrue(second.ops[op].would.startswith(f"runs sm90a_{op}_2d_tf32"), second.ops[op].would)
        self.assertEqual(rep.counts()["layers"], 2)
        self.assertIn("0: Conv2d 3->16 3x3", str(rep))
        self.assertIn(f"problem {second.ops['wgrad'].problem}", rep.text(problems=True))
        self.assertTrue(second.ops["wgrad"].problem.startswith("wgrad/2d/tf32.tf32.f32/n2.d1.h8.w8.c16/k32"))

    def test_stems_grouped_and_depthwise_run_on_convcat(self):
        """What the sm90a catalog would run for a C = 3 stem and a grouped convolution (gather kernels)
        and for depthwise ones (direct kernels), every op and dtype: the query's first kernel.  (On
        tiny depthwise problems the time model may rank a gather kernel first: these are not tiny.)"""
        cat = rt.catalog()
        cases = [("stem 7x7/2", "gather", (2, 3, 32, 32), (64, 3, 7, 7), (2, 2), (3, 3), 1),
                 ("groups 32 of 4", "gather", (2, 128, 14, 14), (128, 4, 3, 3), (1, 1), (1, 1), 32),
                 ("depthwise 3x3", "direct", (4, 64, 32, 32), (64, 1, 3, 3), (1, 1), (1, 1), 64),
                 ("depthwise 7x7/2", "direct", (4, 64, 32, 32), (64, 1, 7, 7), (2, 2), (3, 3), 64),
                 ("depthwise x2", "direct", (4, 64, 32, 32), (128, 1, 3, 3), (1, 1), (1, 1), 64)]
        for name, family, xs, ws, st, pad, g in cases:
            geo = rt.geometry(2, xs, ws, st, pad, pad, (1, 1), g)
            for dtype, tf32, dt in ((torch.float16, False, "f16"), (torch.bfloat16, False, "bf16"),
                                    (torch.float32, True, "tf32")):
                for op in ("fprop", "dgrad", "wgrad"):
                    with self.subTest(name, op=op, dtype=dt):
                        if not any(e.family == family and e.op == op and e.a_type == dt and e.dims == 2 and
                                   e.arch == "sm90a" for e in cat.entries):
                            self.skipTest(f"the catalog has no sm90a {family} {op} {dt} kernels")
                        would = rt.would_run(op, geo, dtype, tf32)
                        self.assertTrue(would.startswith("runs sm90a_"), would)
                        self.assertTrue(would.endswith(f"_{family}"), would)
                        self.assertIn(f"_{op}_2d_{dt}_", would)

    def test_tf32_disallowed_is_a_reason(self):
        m = cct.Conv2d(16, 16, 3, padding=1)
        old = torch.backends.cudnn.allow_tf32
        try:
            torch.backends.cudnn.allow_tf32 = False
            m(torch.randn(1, 16, 4, 4).to(memory_format=torch.channels_last))
        finally:
            torch.backends.cudnn.allow_tf32 = old
        self.assertIn("TF32 disallowed", rt.records(m._convcat_tag)["fprop"].would)

    def test_not_run_yet(self):
        model = cct.convert(nn.Sequential(nn.Conv2d(8, 8, 1)))
        self.assertIn("not run yet", str(cct.report(model)))

    def test_counts_per_family(self):
        """The per-op lines say how many passes ran on each kernel family."""
        model = cct.convert(nn.Sequential(nn.Conv2d(3, 32, 3), nn.Conv2d(32, 32, 3, groups=32), nn.Conv2d(32, 64, 1),
                                          nn.Conv2d(64, 64, 1)))
        for m, fam in zip(model, ("gather", "direct", "tma", None)):
            rec = rt._record(m._convcat_tag, "fprop")
            rec.calls, rec.problem = 1, "fprop/..."
            if fam:
                rec.ran, rec.key, rec.family = "convcat", f"sm90a_fprop_2d_x_{fam}", fam
            else:
                rec.ran, rec.reason = "cuDNN", "no kernel"
        rep = cct.report(model)
        self.assertEqual(rep.counts()["fprop"], dict(convcat=3, fallback=1, families=dict(gather=1, direct=1, tma=1)))
        self.assertIn("  fprop: 3 on convcat (direct 1, gather 1, tma 1), 1 fell back", str(rep))
        self.assertEqual([r.kernel("fprop") for r in rep][:2], ["sm90a_fprop_2d_x_gather", "sm90a_fprop_2d_x_direct"])


class GpuCases(unittest.TestCase):
    """gpu_torch.py's numeric cases against the catalog, on the CPU: the family each case names can
    run it (the GPU script fails a case the query refuses when the catalog has that family's kernels),
    and the strict ones (the C = 3 stem, the grouped and the depthwise convolutions) rank their family
    first for every op and dtype, as the GPU script requires of what ran."""

    def test_cases_follow_the_query(self):
        if not has_catalog():
            self.skipTest(f"no catalog: {rt.catalog_error()}")
        import gpu_torch
        cat = rt.catalog()
        cls = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}
        strict = 0
        for dims, cases in gpu_torch.CASES.items():
            for name, kw, shape, family, is_strict in cases:
                geo = gpu_torch.geometry_of(rt, cls[dims](**kw), shape)
                strict += is_strict
                for dtype, dt in ((torch.float16, "f16"), (torch.bfloat16, "bf16"), (torch.float32, "tf32")):
                    for op in ("fprop", "dgrad", "wgrad"):
                        with self.subTest(name, op=op, dtype=dt):
                            if not any(e.arch == "sm90a" and e.family == family and e.op == op and e.dims == dims
                                       and e.a_type == dt for e in cat.entries):
                                continue   # the GPU script skips it too
                            p, _ = rt.problem(op, geo, dtype, dtype == torch.float32)
                            q = cat.query(p, arch="sm90a")
                            self.assertTrue(q.runnable, q.why_none(p, cat.entries))
                            if is_strict:
                                self.assertEqual(q.runnable[0].family, family, q.runnable[0].key)
        self.assertGreaterEqual(strict, 6)   # the stem, the grouped case, four depthwise ones


class FakePlan:
    def __init__(self, key, workspace_bytes=0):
        self.key, self.workspace_bytes, self.destroyed = key, workspace_bytes, False

    def destroy(self):
        self.destroyed = True


class Decisions(unittest.TestCase):
    """The decision flow of a CUDA call with the device parts mocked (no GPU here): capture, caching,
    device-limit refusals, pins, autotune."""

    def setUp(self):
        if not has_catalog():
            self.skipTest(f"no catalog: {rt.catalog_error()}")
        self.cat = rt.catalog()
        cct.configure(pin=[], autotune=False)
        self.geo = rt.geometry(2, (8, 64, 28, 28), (128, 64, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1)
        p, self.text = rt.problem("fprop", self.geo, torch.bfloat16, False)
        self.q = self.cat.query(p, arch="sm90a")
        if len(self.q.runnable) < 2:
            self.skipTest("fewer than two kernels can run the problem")
        self.planned = []
        self.refuse = set()

        def plan(p, index):
            key = self.cat.entries[index].key
            self.planned.append(key)
            if key in self.refuse:
                raise convcat.ConvcatError("convcat_plan_create", -8, "CONVCAT_ERR_NO_DEVICE", f"{key}: too big")
            return FakePlan(key, 256)

        patches = [unittest.mock.patch.object(rt, "arch_of", lambda d: ("sm90a", 132)),
                   unittest.mock.patch.object(rt._cuda, "ensure_context", lambda i: None),
                   unittest.mock.patch.object(torch.cuda, "device", lambda d: contextlib.nullcontext()),
                   unittest.mock.patch.object(self.cat, "plan", plan)]
        for pt in patches:
            pt.start()
            self.addCleanup(pt.stop)
        self.addCleanup(cct.configure, pin=[], autotune=False, tune_cache="")
        self.dev = torch.device("cuda", 0)

    def decide(self, tune=None):
        return rt.decide("fprop", self.geo, torch.bfloat16, self.dev, tune)

    def test_decisions_take_the_query_first_family(self):
        """Stems and grouped convolutions plan a gather kernel, depthwise ones a direct kernel: the
        query's first (with the device mocked); the decision and the record carry the family."""
        cases = [("gather", rt.geometry(2, (2, 3, 32, 32), (64, 3, 7, 7), (2, 2), (3, 3), (3, 3), (1, 1), 1)),
                 ("gather", rt.geometry(2, (2, 128, 14, 14), (128, 4, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 32)),
                 ("direct", rt.geometry(2, (4, 64, 32, 32), (64, 1, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 64))]
        for family, geo in cases:
            for op in ("fprop", "dgrad", "wgrad"):
                with self.subTest(family=family, op=op, groups=geo.groups):
                    p, _ = rt.problem(op, geo, torch.bfloat16, False)
                    q = self.cat.query(p, arch="sm90a")
                    if not q.runnable:
                        self.skipTest(f"the catalog cannot run {op} groups {geo.groups}")
                    with unittest.mock.patch.object(rt, "_capturing", lambda: False):
                        d = rt.decide(op, geo, torch.bfloat16, self.dev)
                    self.assertEqual(d.key, q.runnable[0].key)
                    self.assertEqual(d.family, family)
                    self.assertEqual(d.family, self.cat.find(d.key).family)

    def test_capture_makes_no_plan_and_caches_nothing(self):
        with unittest.mock.patch.object(rt, "_capturing", lambda: True):
            d = self.decide()
        self.assertIsNone(d.plan)
        self.assertIn("CUDA graph was being captured", d.reason)
        self.assertEqual(self.planned, [])
        with unittest.mock.patch.object(rt, "_capturing", lambda: False):
            d = self.decide()
        self.assertEqual(d.key, self.q.runnable[0].key)
        self.assertIs(self.decide(), d)   # cached: planned once
        self.assertEqual(self.planned, [d.key])

    def test_device_refusal_takes_the_next_kernel(self):
        self.refuse.add(self.q.runnable[0].key)
        with unittest.mock.patch.object(rt, "_capturing", lambda: False):
            d = self.decide()
        self.assertEqual(d.key, self.q.runnable[1].key)
        self.refuse.update(c.key for c in self.q.runnable)
        cct.configure()   # forget decisions
        with unittest.mock.patch.object(rt, "_capturing", lambda: False):
            d = self.decide()
        self.assertIsNone(d.plan)
        self.assertIn("no plan could be made", d.reason)
        self.assertIn("too big", d.reason)

    def test_pins(self):
        last = self.q.runnable[-1].key
        cct.configure(pin=[last])
        with unittest.mock.patch.object(rt, "_capturing", lambda: False):
            d = self.decide()
        self.assertEqual((d.key, d.note), (last, "pinned"))
        other = next(e for e in self.cat.entries if e.op == "dgrad")
        cct.configure(pin={self.text: other.key})
        with unittest.mock.patch.object(rt, "_capturing", lambda: False), warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            d = self.decide()
        self.assertEqual(d.key, self.q.runnable[0].key)
        self.assertIn(f"pin {other.key} ignored: kernel computes dgrad", d.note)
        self.assertTrue(any("ignored" in str(w.message) for w in got))

    def test_autotune_plans_every_candidate_for_the_workspace_then_tunes(self):
        import tempfile
        seen = {}

        def tune(ws):
            seen["ws"] = ws
            return convcat.make_tensors(), None

        def autotune(p, tensors, stream, iterations, cache):
            seen["iterations"], seen["cache"] = iterations, cache
            return self.cat.find(self.q.runnable[-1].key), 0.0125

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "tune.txt")
            cct.configure(autotune=True, tune_cache=path, tune_iterations=7)
            stream = type("S", (), {"cuda_stream": 0})()
            with unittest.mock.patch.object(rt, "_capturing", lambda: False), \
                    unittest.mock.patch.object(self.cat, "autotune", autotune), \
                    unittest.mock.patch.object(torch.cuda, "current_stream", lambda *a: stream):
                d = self.decide(tune)
        self.assertEqual(d.key, self.q.runnable[-1].key)
        self.assertEqual(d.note, "autotuned (12.5 us)")
        self.assertEqual(seen["ws"], 256)
        self.assertEqual(seen["iterations"], 7)
        self.assertIsInstance(seen["cache"], convcat.TuneCache)
        self.assertEqual(len(self.planned), len(self.q.runnable) + 1)   # each for its workspace, then the winner


class Pins(unittest.TestCase):
    def setUp(self):
        if not has_catalog():
            self.skipTest(f"no catalog: {rt.catalog_error()}")
        self.cat = rt.catalog()

    def tearDown(self):
        cct.configure(pin=[])

    def _bf16_problem(self):
        geo = rt.geometry(2, (8, 64, 28, 28), (128, 64, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1)
        p, text = rt.problem("fprop", geo, torch.bfloat16, False)
        return geo, p, text

    def test_pin_list_and_dict(self):
        geo, p, text = self._bf16_problem()
        q = self.cat.query(p, arch="sm90a")
        if len(q.runnable) < 2:
            self.skipTest("fewer than two kernels can run the problem")
        second = q.runnable[1].key
        self.assertEqual(rt.would_run("fprop", geo, torch.bfloat16, False), f"runs {q.runnable[0].key}")
        other = next((e.key for e in self.cat.entries if e.op == "dgrad"), None)
        cct.configure(pin=[other, second] if other else [second])   # the first that can run it
        self.assertEqual(rt.would_run("fprop", geo, torch.bfloat16, False), f"runs {second}")
        cct.configure(pin={text: second})
        self.assertEqual(rt.would_run("fprop", geo, torch.bfloat16, False), f"runs {second}")
        cct.configure(pin=[])
        self.assertEqual(rt.would_run("fprop", geo, torch.bfloat16, False), f"runs {q.runnable[0].key}")

    def test_pin_env(self):
        geo, p, _ = self._bf16_problem()
        q = self.cat.query(p, arch="sm90a")
        if len(q.runnable) < 2:
            self.skipTest("fewer than two kernels can run the problem")
        with unittest.mock.patch.dict(os.environ, {"CONVCAT_PIN": f" {q.runnable[-1].key} "}):
            cfg = rt.Config.from_env()
        self.assertEqual(cfg.pins, (q.runnable[-1].key,))

    def test_unknown_pin_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "not in the catalog"):
            cct.configure(pin="sm90a_fprop_2d_bf16_bf16_f32_bf16_1x1x1_s1_c1x1_coop")


import unittest.mock  # noqa: E402

if __name__ == "__main__":
    unittest.main()
