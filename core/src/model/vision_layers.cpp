// The catalog's convolutional layers (conv2d, batchnorm2d, maxpool2d,
// adaptive_avgpool2d, resnet_bottleneck) on [channels, height, width]
// images, with the cost conventions of layer_catalog.cpp.
#include <string>

#include "model/catalog_parts.h"

namespace pipewright::catalog {
namespace {

// A convolution is a matmul over output pixels (im2col); it stashes its input.
Cost conv_cost(double in_c, double out_c, double k, double out_pixels, double input_numel,
               bool bias) {
    Cost c = matmul_cost(out_pixels, in_c * k * k, out_c, bias);
    c.stash = input_numel;
    c.weight_stash = input_numel;
    return c;
}

// floor((size + 2p - k) / s) + 1, or 0 when the kernel does not fit.
std::int64_t window_out(std::int64_t size, std::int64_t k, std::int64_t s, std::int64_t p) {
    const std::int64_t span = size + 2 * p - k;
    return span < 0 ? 0 : span / s + 1;
}

// A [C, H, W] input; with a channels_param, C must equal `channels`.
bool expect_image(const Ctx& ctx, const Shape& in, std::string_view channels_param = {},
                  double channels = 0) {
    if (in.size() != 3) {
        ctx.input_error(std::string(ctx.type) + " expects a [channels, height, width] input, but " +
                        kPrevious + to_string(in));
        return false;
    }
    if (!channels_param.empty() && static_cast<double>(in[0]) != channels) {
        ctx.input_error(std::string(ctx.type) + " expects an input with " +
                        std::string(channels_param) + " = " + std::to_string(as_int(channels)) +
                        " channels, but " + kPrevious + to_string(in));
        return false;
    }
    return true;
}

// Output size of a sliding window over [C, H, W]; diagnostic when it does not fit.
std::optional<Shape> window_shape(const Ctx& ctx, const Shape& in, double channels_out, double k,
                                  double s, double p) {
    const auto ki = as_int(k), si = as_int(s), pi = as_int(p);
    const auto h = window_out(in[1], ki, si, pi), w = window_out(in[2], ki, si, pi);
    if (h < 1 || w < 1) {
        ctx.input_error(std::string(ctx.type) + " with kernel_size " + std::to_string(ki) +
                        ", stride " + std::to_string(si) + " and padding " + std::to_string(pi) +
                        " needs an input of at least " + std::to_string(ki) + "x" +
                        std::to_string(ki) + " pixels after padding, but " + kPrevious +
                        to_string(in));
        return std::nullopt;
    }
    return Shape{as_int(channels_out), h, w};
}

}  // namespace

std::optional<Result> analyze_conv2d(const Params& p, const Shape& in, const Ctx& ctx) {
    const double cin = p.get("in_channels"), cout = p.get("out_channels"), k = p.get("kernel_size");
    if (!expect_image(ctx, in, "in_channels", cin)) {
        return std::nullopt;
    }
    auto out = window_shape(ctx, in, cout, k, p.get("stride"), p.get("padding"));
    if (!out) {
        return std::nullopt;
    }
    const double pixels = dnumel({(*out)[1], (*out)[2]});
    return Result{conv_cost(cin, cout, k, pixels, dnumel(in), p.flag("bias")), *out, {}};
}

std::optional<Result> analyze_batchnorm2d(const Params& p, const Shape& in, const Ctx& ctx) {
    const double c = p.get("num_features");
    if (!expect_image(ctx, in, "num_features", c)) {
        return std::nullopt;
    }
    return Result{norm_cost(dnumel(in), c), in, {}};
}

std::optional<Result> analyze_maxpool2d(const Params& p, const Shape& in, const Ctx& ctx) {
    const double k = p.get("kernel_size"), pad = p.get("padding");
    if (2 * pad > k) {
        ctx.param_error("padding", "\"padding\" must be at most half of kernel_size = " +
                                       std::to_string(as_int(k)) + ", got " +
                                       std::to_string(as_int(pad)));
        return std::nullopt;
    }
    if (!expect_image(ctx, in)) {
        return std::nullopt;
    }
    auto out = window_shape(ctx, in, static_cast<double>(in[0]), k, p.get("stride"), pad);
    if (!out) {
        return std::nullopt;
    }
    const double n = dnumel(*out);
    return Result{{0, n * k * k, n, 0, n, 0}, *out, {}};  // stashes the argmax indices
}

std::optional<Result> analyze_adaptive_avgpool2d(const Params& p, const Shape& in, const Ctx& ctx) {
    if (!expect_image(ctx, in)) {
        return std::nullopt;
    }
    const auto o = as_int(p.get("output_size"));
    return Result{{0, dnumel(in), dnumel(in), 0, 0, 0}, Shape{in[0], o, o}, {}};
}

std::optional<Result> analyze_bottleneck(const Params& p, const Shape& in, const Ctx& ctx) {
    const double cin = p.get("in_channels"), mid = p.get("mid_channels"),
                 cout = p.get("out_channels"), stride = p.get("stride");
    if (!p.flag("projection") && (stride != 1 || cin != cout)) {
        ctx.param_error("projection",
                        "\"projection\" cannot be false here: the shortcut must change the shape "
                        "(stride " +
                            std::to_string(as_int(stride)) + ", in_channels " +
                            std::to_string(as_int(cin)) + ", out_channels " +
                            std::to_string(as_int(cout)) + ")");
        return std::nullopt;
    }
    if (!expect_image(ctx, in, "in_channels", cin)) {
        return std::nullopt;
    }
    // The 3x3 convolution (padding 1) carries the stride, as in ResNet v1.5.
    auto out = window_shape(ctx, in, cout, 3, stride, 1);
    if (!out) {
        return std::nullopt;
    }
    const double in_pixels = dnumel({in[1], in[2]});
    const double out_pixels = dnumel({(*out)[1], (*out)[2]});
    const double mid_in = mid * in_pixels, mid_out = mid * out_pixels, n_out = cout * out_pixels;
    Cost c;
    c += conv_cost(cin, mid, 1, in_pixels, dnumel(in), false);
    c += norm_cost(mid_in, mid);
    c += elementwise_cost(mid_in, 1);
    c += conv_cost(mid, mid, 3, out_pixels, mid_in, false);
    c += norm_cost(mid_out, mid);
    c += elementwise_cost(mid_out, 1);
    c += conv_cost(mid, cout, 1, out_pixels, mid_out, false);
    c += norm_cost(n_out, cout);
    if (p.flag("projection")) {
        c += conv_cost(cin, cout, 1, out_pixels, dnumel(in), false);
        c += norm_cost(n_out, cout);
    }
    c.fwd += n_out;  // residual add; its gradient is a copy
    c += elementwise_cost(n_out, 1);
    return Result{c, *out, {}};
}

}  // namespace pipewright::catalog
